"""The output readers stream ``out_*.csv`` one row at a time and give what the whole file,
read at once, gives: checked on the files of a real run of the embedded engine."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest
from procset import ProcSet

from snficon.analysis.batsim_outputs import (
    KILLED_STATES,
    iter_jobs,
    iter_rows,
    read_energy_curve,
)
from snficon.analysis.metrics import ZERO_RUNTIME_S, metrics_from_outputs
from snficon.drivers.session import simulate_in_process
from snficon.errors import InputError
from snficon.workload.markovian import MarkovianParams, generate_markovian
from snficon.workload.writer import BatsimOptions, write_batsim_workload

PLATFORM = Path(__file__).resolve().parents[2] / "platforms" / "aoba-64.xml"
NODES = 64


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The output prefix of 300 Markovian jobs on AOBA-64 under SNF-ICON."""
    folder = tmp_path_factory.mktemp("streamed")
    workload = folder / "w.json"
    params = MarkovianParams(seed=3, n_jobs=300, load=0.7, nodes=NODES)
    write_batsim_workload(workload, generate_markovian(params), NODES, BatsimOptions())
    platform = str(PLATFORM)
    simulate_in_process(platform, [workload], "snficon",
                        {"platform": str(platform), "decisions": str(folder / "d.csv")},
                        export_prefix=folder / "out")
    return folder / "out"


def _whole(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as stream:
        return list(csv.DictReader(stream))


def test_rows_and_jobs_are_the_whole_files(run: Path):
    jobs_path = Path(f"{run}_jobs.csv")
    whole = _whole(jobs_path)
    assert len(whole) == 300
    assert list(iter_rows(jobs_path, ("job_id",))) == whole
    records = list(iter_jobs(jobs_path))
    assert [r.job_id for r in records] == [row["job_id"] for row in whole]
    assert [r.finish for r in records] == [float(row["finish_time"]) for row in whole]
    assert [r.nodes for r in records] == [len(ProcSet.from_str(row["allocated_resources"]))
                                          for row in whole]
    energy = _whole(Path(f"{run}_consumed_energy.csv"))
    curve = read_energy_curve(Path(f"{run}_consumed_energy.csv"))
    head = [] if float(energy[0]["time"]) == 0 else [0.0]
    assert list(curve.times) == head + [float(row["time"]) for row in energy]
    assert list(curve.energies) == head + [float(row["energy"]) for row in energy]


def test_metrics_equal_the_whole_file_sums(run: Path):
    """The streamed metrics, bit for bit, against the formulas over the whole file's lists."""
    rows = [row for row in _whole(Path(f"{run}_jobs.csv")) if row["final_state"] != "REJECTED"]
    start = [float(r["starting_time"]) for r in rows]
    submit = [float(r["submission_time"]) for r in rows]
    finish = [float(r["finish_time"]) for r in rows]
    runtime = [float(r["execution_time"]) for r in rows]
    nodes = [len(ProcSet.from_str(r["allocated_resources"])) for r in rows]
    waits = [s - q for s, q in zip(start, submit, strict=True)]
    timed = [i for i, d in enumerate(runtime) if d > ZERO_RUNTIME_S]
    m = metrics_from_outputs(run)
    assert m.jobs == len(rows) and m.makespan == max(finish)
    assert m.mean_wait == math.fsum(waits) / len(waits) and m.max_wait == max(waits)
    assert m.mean_response == math.fsum(f - q for f, q in zip(finish, submit, strict=True)) \
        / len(rows)
    assert m.mean_slowdown == math.fsum((finish[i] - submit[i]) / runtime[i]
                                        for i in timed) / len(timed)
    assert m.utilization == math.fsum(runtime[i] * nodes[i] for i in timed) / (NODES * max(finish))
    assert m.energy_compute == math.fsum(float(r["consumed_energy"]) for r in rows)
    assert m.jobs_killed == sum(r["final_state"] in KILLED_STATES for r in rows)


def test_a_bad_line_is_named_when_the_stream_reaches_it(run: Path, tmp_path: Path):
    bad = tmp_path / "out_jobs.csv"
    text = Path(f"{run}_jobs.csv").read_text().splitlines()
    fields = text[5].split(",")
    fields[3] = "soon"  # submission_time of the fifth job
    bad.write_text("\n".join([*text[:5], ",".join(fields), *text[6:]]) + "\n")
    stream = iter_jobs(bad)
    assert len([next(stream) for _ in range(4)]) == 4
    with pytest.raises(InputError, match=r"out_jobs.csv: line 6: submission_time"):
        next(stream)
    bad.write_bytes(Path(f"{run}_jobs.csv").read_bytes() + b"\xff\n")
    stream = iter_jobs(bad)
    assert len([next(stream) for _ in range(100)]) == 100  # read before the bad byte
    with pytest.raises(InputError, match="out_jobs.csv: cannot read"):
        list(stream)
    bad.write_text("time,energy\n0,0\n")
    with pytest.raises(InputError, match=r"missing column\(s\) \['job_id'\]"):
        next(iter_rows(bad, ("job_id",)))
