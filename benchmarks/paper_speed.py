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

On a shared or virtual machine CPU time still varies by 10 % and more from run
to run. ``--instructions`` counts instead the instructions each child executes
(valgrind's callgrind: the same count for the same code and inputs whatever
else runs, about 50 times slower; one run per tree, ``--workers`` at once):
``sim`` is then the run's count less that of a child that only imports the
simulator (what the imports cost in that tree).

``--set NAME=VALUE`` gives an option to this tree's runs only: to compare at
equal behaviour a policy whose outputs changed on purpose since the older
commit (e.g. ``--set request_end_calls=false``, issue 35's calls off).

    uv run python benchmarks/paper_speed.py --base 3afc13c --instructions --workers 2 \
        --cases das2-fs1 --policies snficon-nf
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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from child_run import callgrind_instructions, commit_worktree, positive_int, run_child, tree_env
from paper_outputs import CASES, INPUTS, POLICIES, REPO, convert

from snficon.commands.run import parse_settings
from snficon.errors import InputError

#: The commit issue 16 was filed against (its "today").
ISSUE_BASE = "1bd5209"
#: The child: one in-process run of the tree on PYTHONPATH, its simulation CPU as JSON
#: (policy "-": the imports alone).
CHILD = """
import json, sys, time
from pathlib import Path
from snficon.drivers.session import simulate_in_process
platform, workload, policy, prefix, options = sys.argv[1:6]
if policy == "-":
    sys.exit(0)
began = time.process_time()
simulate_in_process(Path(platform), [Path(workload)], policy,
                    {"platform": platform, **json.loads(options)}, export_prefix=Path(prefix))
print(json.dumps({"sim": time.process_time() - began}))
"""


def child_command(tree: Path, platform: Path, workload: Path, policy: str,
                  options: dict[str, Any], scratch: Path) -> list[str]:
    """The command of one child run of ``tree``'s code, writing under ``scratch``."""
    folder = Path(tempfile.mkdtemp(dir=scratch))
    return [sys.executable, "-c", CHILD, str(platform), str(workload), policy,
            str(folder / "out"), json.dumps(options)]


def run_case(tree: Path, platform: Path, workload: Path, policy: str,
             options: dict[str, Any], scratch: Path) -> tuple[float, float]:
    """(simulation CPU, whole-process CPU) seconds of one run of ``tree``'s code."""
    child = run_child(child_command(tree, platform, workload, policy, options, scratch),
                      cwd=tree, env=tree_env(tree),
                      what=f"{tree}: {policy} on {workload.name}")
    simulation = json.loads(child.stdout.strip().splitlines()[-1])["sim"]
    return simulation, child.cpu_s


def count_case(tree: Path, platform: Path, workload: Path, policy: str,
               options: dict[str, Any], scratch: Path) -> int:
    """Instructions of one run of ``tree``'s code (policy "-": its imports alone)."""
    return callgrind_instructions(
        child_command(tree, platform, workload, policy, options, scratch), cwd=tree,
        env=tree_env(tree), what=f"{tree}: {policy} on {workload.name}")


def revision(tree: Path) -> str:
    """The short commit id of ``tree``'s HEAD ("+" when it has uncommitted changes)."""
    head = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(tree), "status", "--porcelain", "-uno"],
                           capture_output=True, text=True).stdout.strip()
    return head + ("+" if dirty else "")


def print_row(case: str, policy: str, sim: dict[str, float], run: dict[str, float],
              unit: str) -> None:
    """One table row: base, now and base / now (above 1: now is faster)."""
    number = "9.2f" if unit == "s" else "9.3f"
    print(f"{case:10s} {policy:13s} {sim['base']:{number}} {sim['now']:{number}} "
          f"{sim['base'] / sim['now']:6.3f} {run['base']:{number}} {run['now']:{number}} "
          f"{run['base'] / run['now']:6.3f}", flush=True)


def time_pair(trees: dict[str, Path], platform_name: str, workload: Path, policy: str,
              options: dict[str, dict[str, Any]], repeat: int,
              scratch: Path) -> tuple[dict[str, float], dict[str, float]]:
    """Median (simulation, whole-run) CPU seconds of each tree, the trees alternating."""
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
    for _ in range(repeat):
        for name, tree in trees.items():
            times[name].append(run_case(tree, tree / "platforms" / platform_name, workload,
                                        policy, options[name], scratch))
    return ({name: statistics.median(t[0] for t in runs) for name, runs in times.items()},
            {name: statistics.median(t[1] for t in runs) for name, runs in times.items()})


def count_pair(pool: ThreadPoolExecutor, trees: dict[str, Path], imports: dict[str, int],
               platform_name: str, workload: Path, policy: str,
               options: dict[str, dict[str, Any]],
               scratch: Path) -> tuple[dict[str, float], dict[str, float]]:
    """(simulation, whole-run) instructions of each tree, in 10^9."""
    runs = {name: pool.submit(count_case, tree, tree / "platforms" / platform_name, workload,
                              policy, options[name], scratch)
            for name, tree in trees.items()}
    whole = {name: run.result() / 1e9 for name, run in runs.items()}
    return {name: whole[name] - imports[name] / 1e9 for name in trees}, whole


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default=ISSUE_BASE, help="the older commit (default: "
                        f"{ISSUE_BASE}, issue 16's today)")
    parser.add_argument("--policies", nargs="+", default=list(POLICIES))
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--repeat", type=positive_int, default=3, help="runs per tree and pair")
    parser.add_argument("--instructions", action="store_true",
                        help="count instructions (callgrind, one run per tree) instead of "
                             "timing --repeat runs")
    parser.add_argument("--workers", type=positive_int, default=1,
                        help="children counted at once (--instructions only)")
    parser.add_argument("--set", dest="settings", metavar="NAME=VALUE", action="append",
                        default=[], help="an option for this tree's runs only (repeatable)")
    args = parser.parse_args()
    if not INPUTS.is_dir():
        raise SystemExit(f"{INPUTS} is absent: the paper's inputs come from ../shared")
    try:
        options = {"base": {}, "now": parse_settings(args.settings)}
    except InputError as exc:
        raise SystemExit(str(exc)) from None
    with tempfile.TemporaryDirectory(prefix="snficon-speed-") as folder, \
            ThreadPoolExecutor(args.workers) as pool:
        scratch = Path(folder)
        with commit_worktree(REPO, args.base, scratch) as base:
            trees = {"base": base, "now": REPO}
            unit = "Ginstr" if args.instructions else "s"
            measure = "instructions (10^9), one run" if args.instructions else \
                f"CPU seconds, median of {args.repeat}"
            print(f"{measure}; base {args.base}, now {revision(REPO)}"
                  + (f" with {' '.join(args.settings)}" if args.settings else ""))
            print(f"{'case':10s} {'policy':13s} {'sim base':>9s} {'sim now':>9s} {'x':>6s}"
                  f" {'run base':>9s} {'run now':>9s} {'x':>6s}")
            imports: dict[str, int] = {}
            if args.instructions:
                counted = {name: pool.submit(count_case, tree, tree, tree, "-", {}, scratch)
                           for name, tree in trees.items()}
                imports = {name: count.result() for name, count in counted.items()}
            for case in args.cases:
                source, platform_name = CASES[case]
                with contextlib.redirect_stdout(io.StringIO()):  # the conversion's summary
                    workload = convert(INPUTS / source, scratch / f"{case}.json")
                for policy in args.policies:
                    if args.instructions:
                        sim, run = count_pair(pool, trees, imports, platform_name, workload,
                                              policy, options, scratch)
                    else:
                        sim, run = time_pair(trees, platform_name, workload, policy, options,
                                             args.repeat, scratch)
                    print_row(case, policy, sim, run, unit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
