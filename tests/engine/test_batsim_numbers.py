"""The workload as Batsim reads it: rapidjson's default parser (``build_engine``).

Batsim 4.2.1 parses the workload file (``Workload::load_from_json``) and every
answer (``JsonProtocolReader::parse_and_apply_message``) with rapidjson's
``Document::Parse`` and its default flags, whose number reading is not
correctly rounded for some numbers of 16 or 17 significant digits. The
project's Markovian workloads are full of such numbers (about one in ten of
``replay/markovian-500-wt.json``), and a submission time one ulp off is enough
to move SimGrid's clock sums, and with them which events end in the same step
(the batsched replay ``aoba64-ebis`` diverged at t = 39215.992104 until the
engine read its workload this way).

The texts below are among ``test_wire.RAPIDJSON_READINGS``, whose reference doubles
come from rapidjson 1.1.0 itself (how: see there).
"""

from __future__ import annotations

from pathlib import Path

from procset import ProcSet

from snficon.drivers.inprocess import run_in_process
from snficon.drivers.session import build_engine
from snficon.engine.wire import rapidjson_double
from snficon.workload.reader import read_workload

from .conftest import write_workload
from .schedulers_for_tests import OneShot


def test_the_engine_reads_the_workload_as_batsim(platform4: Path, tmp_path: Path):
    delay_text, subtime_text, walltime_text = "9158.629325904787", "9518.426744935083", \
        "16043.705453802635"
    profiles = {"d": {"type": "delay", "delay": float(delay_text)}}
    workload = write_workload(tmp_path / "w.json", [
        {"id": 1, "subtime": float(subtime_text), "res": 1, "profile": "d",
         "walltime": float(walltime_text)}], profiles)
    assert subtime_text in workload.read_text()  # json.dumps writes the shortest repr

    plain = read_workload(workload)
    assert plain.jobs[0].subtime == float(subtime_text)
    engine = build_engine(platform4, [workload])
    job = engine.ctx.jobs["w0!1"]
    assert job.spec.subtime == rapidjson_double(subtime_text) != float(subtime_text)
    assert job.spec.walltime == rapidjson_double(walltime_text) != float(walltime_text)
    assert job.profile.delay_s == rapidjson_double(delay_text) != float(delay_text)

    def start(bs, submitted):
        submitted.allocation = ProcSet(0)
        bs.execute_jobs([submitted])

    run_in_process(engine, OneShot(start))
    # The job starts at the answer's now (9518.426745, the six decimals pybatsim saw) and
    # ends one step of Batsim's reading D of its delay later: its runtime is
    # (9518.426745 + D) - 9518.426745 in doubles, 9158.629325904789, where the correctly
    # rounded delay would give 9158.629325904785.
    assert job.start == 9518.426745
    delay = rapidjson_double(delay_text)
    assert job.runtime == (job.start + delay) - job.start == 9158.629325904789
