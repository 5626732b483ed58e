"""Speed of the policies: whole-run wall time and decision time per invocation.

Runs each policy in-process on the Markovian workload / AOBA-64 (the
project's own file), DAS2 FS2 / AOBA-64 and SDSC Blue / AOBA-1152 (the
paper's inputs, read from ../shared and converted on the fly) and prints the
wall time of each run and the p50/p99 of the policy's decision time (the
``wall_us`` column of the decision log). Run by hand:

    uv run python benchmarks/policies_bench.py [--policies fcfsbIpm snfIpm snficon]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from snficon.analysis.decision_log import read_decision_log
from snficon.drivers.session import simulate_in_process

REPO = Path(__file__).resolve().parents[1]
INPUTS = REPO.parent / "shared" / "data" / "paper-inputs"
CASES = {
    "Markovian / AOBA-64": ("markovian-3000.json", "aoba-64.xml"),
    "DAS2-FS2 / AOBA-64": ("DAS2-fs2-0-3000.json", "aoba-64.xml"),
    "SDSC-Blue / AOBA-1152": ("SDSC-BLUE-2000-4.2-cln-0-3000.json", "aoba-1152.xml"),
}


def convert(source: Path, target: Path) -> Path:
    """The paper's SPARS JSON as a Batsim workload (``snficon workload convert``)."""
    from snficon.cli import main

    if main(["workload", "convert", str(source), "-o", str(target)]) != 0:
        raise SystemExit(f"could not convert {source}")
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policies", nargs="+", default=["fcfsbIpm", "snfIpm", "snficon"])
    args = parser.parse_args()
    if not INPUTS.is_dir():
        raise SystemExit(f"{INPUTS} is absent: the paper's inputs come from ../shared")
    with tempfile.TemporaryDirectory(prefix="snficon-bench-") as folder:
        work = Path(folder)
        for case, (workload_name, platform_name) in CASES.items():
            own = REPO / "workloads" / workload_name
            workload = own if own.exists() else convert(INPUTS / workload_name,
                                                        work / workload_name)
            platform = REPO / "platforms" / platform_name
            for policy in args.policies:
                log = work / f"{policy}-{platform_name}.csv"
                options = {"platform": str(platform), "decisions": str(log)}
                began = time.perf_counter()
                simulate_in_process(platform, [workload], policy, options)
                wall = time.perf_counter() - began
                micros = np.array([row["wall_us"] for row in read_decision_log(log)])
                print(f"{case:24s} {policy:9s} wall {wall:6.1f} s  invocations {len(micros):6d}"
                      f"  decision p50 {np.percentile(micros, 50) / 1e3:6.2f} ms"
                      f"  p99 {np.percentile(micros, 99) / 1e3:6.2f} ms"
                      f"  max {micros.max() / 1e3:7.2f} ms")


if __name__ == "__main__":
    main()
