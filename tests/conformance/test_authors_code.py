"""The baselines against the paper authors' own simulator (SPARS-ICON, run unmodified).

``../shared/data/authors-code-runs`` holds the per-job logs and metrics of the
authors' code on the paper's Markovian workload with exact transitions (its
README). The same input, converted as a user converts it (``snficon workload
convert``), is run here as a user runs it (``snficon run``, the embedded engine)
and compared job by job with ``snficon compare``'s reader and comparison.

Measured when this test was written: FCFS/B+IPM on Taurus-64 starts every job
at the authors' time on the authors' nodes; SNF+IPM differs in node sets from
job 839 on AOBA-64 and from job 1257 on Taurus-64 (a few starts move), the
mean wait by +0.010 % and +0.252 % and the wasted energy by -0.086 % and
-0.023 % (authors' minus ours). The bar held here is the project's: means
within 1 %.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from snficon.analysis.compare import Comparison, compare_logs
from snficon.analysis.job_logs import read_job_log
from snficon.cli import main

REPO = Path(__file__).resolve().parents[2]
WORKLOAD = Path("data") / "paper-inputs" / "generated-markovian-3000.json"
RUNS = Path("data") / "authors-code-runs"
#: The authors' run folder: our platform, our policy, and whether every job starts at the
#: authors' time (within 1 ms) on the authors' nodes.
CASES = {
    "Taurus-64-markovian-easy_psas": ("taurus-64.xml", "fcfsbIpm", True),
    "Taurus-64-markovian-snf_psas": ("taurus-64.xml", "snfIpm", False),
    "AOBA-64-markovian-snf_psas": ("aoba-64.xml", "snfIpm", False),
}


@pytest.fixture(scope="module")
def workload(shared_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The authors' input as a Batsim workload."""
    source = shared_dir / WORKLOAD
    if not source.is_file():
        pytest.skip(f"{source} is absent")
    target = tmp_path_factory.mktemp("authors") / "markovian.json"
    assert main(["workload", "convert", str(source), "-o", str(target)]) == 0
    return target


def compared(shared_dir: Path, workload: Path, folder: Path, run: str) -> Comparison:
    """Our run of ``run``'s case against the authors' log of it."""
    authors = shared_dir / RUNS / run
    if not authors.is_dir():
        pytest.skip(f"{authors} is absent")
    platform, policy, _ = CASES[run]
    assert main(["run", "--platform", str(REPO / "platforms" / platform), "--workload",
                 str(workload), "--policy", policy, "-o", str(folder)]) == 0
    return compare_logs(read_job_log(folder), read_job_log(authors))


@pytest.mark.parametrize("run", list(CASES))
def test_the_baselines_against_the_authors_code(shared_dir: Path, workload: Path,
                                                tmp_path: Path, run: str) -> None:
    """Every job runs in both; mean wait, mean response, makespan and wasted energy agree
    within 1 %; FCFS/B+IPM on Taurus-64 is the authors' schedule job by job."""
    comparison = compared(shared_dir, workload, tmp_path / "ours", run)
    assert comparison.matched == 3000 and not comparison.only_a and not comparison.only_b
    relative = {m.name: m.relative for m in comparison.metrics}
    for name in ("mean_wait", "mean_response", "makespan", "energy_wasted"):
        assert relative[name] is not None and abs(relative[name]) < 0.01, (name, relative)
    if CASES[run][2]:
        assert comparison.first is None, comparison.first
