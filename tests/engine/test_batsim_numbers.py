"""Numbers as Batsim reads them: rapidjson's default parser, for answers and for the workload.

Batsim 4.2.1 parses the workload file (``Workload::load_from_json``) and every
answer (``JsonProtocolReader::parse_and_apply_message``) with rapidjson's
``Document::Parse`` and its default flags, whose number reading is not
correctly rounded for some numbers of 16 or 17 significant digits. The
project's Markovian workloads are full of such numbers (about one in ten of
``replay/markovian-500-wt.json``), and a submission time one ulp off is enough
to move SimGrid's clock sums, and with them which events end in the same step
(the batsched replay ``aoba64-ebis`` diverged at t = 39215.992104 until the
engine read its workload this way).

The reference doubles below were obtained by compiling a C++ program that
calls rapidjson 1.1.0's ``Document::Parse`` (default flags) on each text and
prints ``GetDouble()`` with ``%a``; they are independent of the Python code
under test.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from procset import ProcSet

from snficon.drivers.inprocess import run_in_process
from snficon.drivers.session import build_engine
from snficon.engine.wire import rapidjson_double
from snficon.workload.reader import read_workload

from .conftest import write_workload
from .schedulers_for_tests import OneShot

#: (text, rapidjson 1.1.0's reading as a hex float, whether it is the correctly rounded one).
RAPIDJSON_READINGS = [
    ("16043.705453802635", "0x1.f55da4c4f6995p+13", False),
    ("9158.629325904787", "0x1.1e3508dc051ccp+13", False),
    ("9418.590134232301", "0x1.2654b8984bdfdp+13", False),
    ("9518.426744935083", "0x1.297369f93f9f6p+13", False),
    ("10287.644048257825", "0x1.417d2702c5e33p+13", False),
    ("123456789012.34567891", "0x1.cbe991a14588p+36", False),
    ("9007199254740993.5", "0x1p+53", False),
    ("215.99210378475135", "0x1.affbf506fb7d6p+7", True),
    ("10150.094827696674", "0x1.3d30c23505ffcp+13", True),
    ("0.1", "0x1.999999999999ap-4", True),
    ("3.14159265358979323846", "0x1.921fb54442d18p+1", True),
    ("1e-5", "0x1.4f8b588e368f1p-17", True),
    ("2.5e+3", "0x1.388p+11", True),
    ("0.000000123456789012345678", "0x1.091f1667f0596p-23", True),
]


@pytest.mark.parametrize("text, reading, correctly_rounded", RAPIDJSON_READINGS)
def test_rapidjson_double_reads_as_rapidjson(text: str, reading: str, correctly_rounded: bool):
    expected = float.fromhex(reading)
    assert rapidjson_double(text) == expected
    assert (float(text) == expected) is correctly_rounded


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
