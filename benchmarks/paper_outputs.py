"""Fingerprints of every output file of the paper's six base cases under every policy.

A refactor must leave the simulated behaviour unchanged: this benchmark runs
the six base cases of the paper (DAS2 FS1-FS4 and the Markovian workload on
AOBA-64, SDSC Blue on AOBA-1152) under each policy, in-process, and hashes
each output file (Batsim's five files and the decision log) with the
wall-clock columns removed (``scheduling_time``/``simulation_time`` of
``out_schedule.csv``, the simulator's name, ``wall_us`` of the decision log).

    uv run python benchmarks/paper_outputs.py --save benchmarks/paper_outputs.json
    uv run python benchmarks/paper_outputs.py --check benchmarks/paper_outputs.json

``--check`` exits 1 and names every (case, policy, file) whose fingerprint
changed. The paper's inputs are read from ``../shared`` and converted on the fly.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
INPUTS = REPO.parent / "shared" / "data" / "paper-inputs"
CASES = {
    "das2-fs1": ("DAS2-fs1-0-3000.json", "aoba-64.xml"),
    "das2-fs2": ("DAS2-fs2-0-3000.json", "aoba-64.xml"),
    "das2-fs3": ("DAS2-fs3-0-3000.json", "aoba-64.xml"),
    "das2-fs4": ("DAS2-fs4-0-3000.json", "aoba-64.xml"),
    "markovian": ("generated-markovian-3000.json", "aoba-64.xml"),
    "sdsc-blue": ("SDSC-BLUE-2000-4.2-cln-0-3000.json", "aoba-1152.xml"),
}
POLICIES = ("fcfsbIpm", "snfIpm", "snficon", "snficon-ng", "snficon-nf", "snficon-ngnf")
#: Columns that measure the machine running the simulation, not the simulation.
VOLATILE = {"out_schedule.csv": {"scheduling_time", "simulation_time", "batsim_version"},
            "decisions.csv": {"wall_us"}}


def fingerprint(path: Path) -> str:
    """SHA-256 of a CSV file without its volatile columns."""
    drop = VOLATILE.get(path.name, set())
    if not drop:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
    keep = [i for i, name in enumerate(rows[0]) if name not in drop]
    text = "\n".join(",".join(row[i] for i in keep) for row in rows)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def run_case(case: str, policy: str, workload: str,
             work: str) -> tuple[str, str, dict, float, float]:
    from snficon.drivers.session import simulate_in_process

    _, platform_name = CASES[case]
    platform = REPO / "platforms" / platform_name
    folder = Path(work) / f"{case}-{policy}"
    folder.mkdir(parents=True, exist_ok=True)
    options = {"platform": str(platform), "decisions": str(folder / "decisions.csv")}
    began, began_cpu = time.perf_counter(), time.process_time()
    simulate_in_process(platform, [workload], policy, options, export_prefix=folder / "out")
    wall, cpu = time.perf_counter() - began, time.process_time() - began_cpu
    prints = {path.name: fingerprint(path) for path in sorted(folder.glob("*.csv"))}
    return case, policy, prints, wall, cpu


def convert(source: Path, target: Path) -> Path:
    from snficon.cli import main

    if main(["workload", "convert", str(source), "-o", str(target)]) != 0:
        raise SystemExit(f"could not convert {source}")
    return target


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--save", type=Path, help="write the fingerprints to this JSON file")
    parser.add_argument("--check", type=Path, help="compare with the fingerprints in this file")
    parser.add_argument("--policies", nargs="+", default=list(POLICIES))
    parser.add_argument("--cases", nargs="+", default=list(CASES))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--keep", type=Path, help="keep the run folders under this folder")
    args = parser.parse_args()
    if not INPUTS.is_dir():
        raise SystemExit(f"{INPUTS} is absent: the paper's inputs come from ../shared")
    results: dict[str, dict[str, dict[str, str]]] = {}
    with tempfile.TemporaryDirectory(prefix="snficon-outputs-") as scratch:
        folder = str(args.keep) if args.keep else scratch
        work = Path(folder)
        work.mkdir(parents=True, exist_ok=True)
        with ProcessPoolExecutor(args.workers) as pool:
            inputs = {case: pool.submit(convert, INPUTS / CASES[case][0],
                                        work / f"{case}.json") for case in args.cases}
            futures = [pool.submit(run_case, case, policy, str(inputs[case].result()), folder)
                       for case in args.cases for policy in args.policies]
            for future in futures:
                case, policy, prints, wall, cpu = future.result()
                results.setdefault(case, {})[policy] = prints
                print(f"{case:10s} {policy:13s} {wall:6.2f} s  cpu {cpu:6.2f} s", flush=True)
    if args.save:
        args.save.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
        print(f"saved {args.save}")
    if args.check:
        expected = json.loads(args.check.read_text())
        changed = [f"{case} {policy} {name}"
                   for case, by_policy in results.items()
                   for policy, prints in by_policy.items()
                   for name, digest in prints.items()
                   if expected.get(case, {}).get(policy, {}).get(name) != digest]
        if changed:
            print("changed:\n  " + "\n  ".join(changed))
            return 1
        print(f"identical: {sum(len(p) for p in results.values())} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
