"""CPU time of the paper's 3000-job cases: this tree against an older commit.

Issue 16 asks every policy to run the paper's six base cases (DAS2 FS1-FS4
and the Markovian workload on AOBA-64, SDSC Blue on AOBA-1152) at least twice
as fast as at the commit the issue was filed against, with byte-identical
outputs (``paper_outputs.py --check`` checks those). This benchmark checks
out the older commit in a temporary git worktree, runs each (case, policy)
in-process in a fresh interpreter once per tree and repetition, alternating
the trees so that both see the same machine load, and prints the median CPU
seconds of each:

- ``sim``: the simulation alone (``simulate_in_process``, engine, pybatsim,
  adapter and policy), measured inside the child;
- ``run``: the whole child process, imports included (what a user waits for
  beyond the summary ``snficon run`` prints).

    uv run python benchmarks/paper_speed.py [--base 1bd5209] [--repeat 3]
        [--cases das2-fs1 sdsc-blue] [--policies fcfsbIpm snficon]

CPU time, not wall time, because the machine may be shared. Both trees run
with this environment's packages; the paper's inputs are read from
``../shared`` and converted once, by this tree.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from child_run import commit_worktree, positive_int, run_child, tree_env
from paper_outputs import CASES, INPUTS, POLICIES, REPO, convert

#: The commit issue 16 was filed against (its "today").
ISSUE_BASE = "1bd5209"
#: The child: one in-process run of the tree on PYTHONPATH, its simulation CPU as JSON.
CHILD = """
import json, sys, time
from pathlib import Path
from snficon.drivers.session import simulate_in_process
platform, workload, policy, prefix = sys.argv[1:5]
began = time.process_time()
simulate_in_process(Path(platform), [Path(workload)], policy, {"platform": platform},
                    export_prefix=Path(prefix))
print(json.dumps({"sim": time.process_time() - began}))
"""


def run_case(tree: Path, platform: Path, workload: Path, policy: str,
             scratch: Path) -> tuple[float, float]:
    """(simulation CPU, whole-process CPU) seconds of one run of ``tree``'s code."""
    folder = Path(tempfile.mkdtemp(dir=scratch))
    child = run_child([sys.executable, "-c", CHILD, str(platform), str(workload), policy,
                       str(folder / "out")], cwd=tree,
                      env=tree_env(tree),
                      what=f"{tree}: {policy} on {workload.name}")
    simulation = json.loads(child.stdout.strip().splitlines()[-1])["sim"]
    return simulation, child.cpu_s


def revision(tree: Path) -> str:
    """The short commit id of ``tree``'s HEAD ("+" when it has uncommitted changes)."""
    head = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(tree), "status", "--porcelain", "-uno"],
                           capture_output=True, text=True).stdout.strip()
    return head + ("+" if dirty else "")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default=ISSUE_BASE, help="the older commit (default: "
                        f"{ISSUE_BASE}, issue 16's today)")
    parser.add_argument("--policies", nargs="+", default=list(POLICIES))
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--repeat", type=positive_int, default=3, help="runs per tree and pair")
    args = parser.parse_args()
    if not INPUTS.is_dir():
        raise SystemExit(f"{INPUTS} is absent: the paper's inputs come from ../shared")
    with tempfile.TemporaryDirectory(prefix="snficon-speed-") as folder:
        scratch = Path(folder)
        with commit_worktree(REPO, args.base, scratch) as base:
            print(f"CPU seconds, median of {args.repeat}; base {args.base}, now "
                  f"{revision(REPO)}")
            print(f"{'case':10s} {'policy':13s} {'sim base':>9s} {'sim now':>8s} {'x':>6s}"
                  f" {'run base':>9s} {'run now':>8s} {'x':>6s}")
            for case in args.cases:
                source, platform_name = CASES[case]
                with contextlib.redirect_stdout(io.StringIO()):  # the conversion's summary
                    workload = convert(INPUTS / source, scratch / f"{case}.json")
                for policy in args.policies:
                    times: dict[str, list[tuple[float, float]]] = {"base": [], "now": []}
                    for _ in range(args.repeat):
                        for name, tree in (("base", base), ("now", REPO)):
                            times[name].append(run_case(
                                tree, tree / "platforms" / platform_name, workload, policy,
                                scratch))
                    sim = {name: statistics.median(t[0] for t in runs)
                           for name, runs in times.items()}
                    run = {name: statistics.median(t[1] for t in runs)
                           for name, runs in times.items()}
                    print(f"{case:10s} {policy:13s} {sim['base']:9.2f} {sim['now']:8.2f} "
                          f"{sim['base'] / sim['now']:6.2f} {run['base']:9.2f} "
                          f"{run['now']:8.2f} {run['base'] / run['now']:6.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
