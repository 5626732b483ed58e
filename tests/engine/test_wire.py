"""Numbers read as Batsim reads them: each reading is the digit-by-digit parse, bit for bit."""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path

import numpy as np
import pytest

from snficon.engine.wire import as_batsim_reads, parse_number, rapidjson_double


def _bits(value: float) -> bytes:
    return struct.pack("<d", value)


def _random_doubles(seed: int, count: int) -> list[float]:
    """Doubles over many magnitudes: random bits, and times like a scheduler's sums."""
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 2**63, count, dtype=np.uint64) | (
        rng.integers(0, 2, count, dtype=np.uint64) << np.uint64(63))
    values = [v for v in raw.view(np.float64).tolist() if math.isfinite(v)]
    times = rng.uniform(0, 1e8, count) + rng.uniform(0, 1, count) * 10.0 ** rng.integers(
        -6, 4, count)
    scaled = rng.uniform(0, 1, count) * 10.0 ** rng.integers(-5, 17, count)
    return values + times.tolist() + scaled.tolist() + (-scaled).tolist()


@pytest.mark.parametrize("seed", range(4))
def test_as_batsim_reads_is_rapidjson_of_the_repr(seed):
    for value in _random_doubles(seed, 25_000):
        assert _bits(as_batsim_reads(value)) == _bits(parse_number(repr(value))), repr(value)


@pytest.mark.parametrize("seed", range(4))
def test_rapidjson_double_is_the_digit_loop_on_decimals(seed):
    rng = np.random.default_rng(100 + seed)
    for _ in range(40_000):
        digits = "".join(rng.choice(list("0123456789"), int(rng.integers(1, 24))))
        whole = digits.lstrip("0") or "0"
        cut = int(rng.integers(0, len(whole) + 1))
        text = whole[:cut] or "0"
        if cut < len(whole) or rng.random() < 0.5:
            text += "." + (whole[cut:] or "0")
        if rng.random() < 0.3:
            text = "-" + text
        assert _bits(rapidjson_double(text)) == _bits(parse_number(text)), text


@pytest.mark.parametrize("text", ["9007199254740991.5", "9007199254740992.5", "0.1",
                                  "-0.0", "0", "-0", "1" * 17 + ".25", "4800022.000000001",
                                  "0." + "0" * 21 + "1", "0." + "0" * 22 + "1",
                                  "123456789012345678901234.5", "17976931348623157" + "0" * 292,
                                  "9" * 5000 + ".5", "1." + "0" * 5000 + "1"])
def test_rapidjson_double_is_the_digit_loop_at_the_edges(text):
    assert _bits(rapidjson_double(text)) == _bits(parse_number(text))


def test_every_number_of_the_recordings_reads_as_the_digit_loop(shared_dir: Path):
    texts: set[str] = set()
    for path in sorted((shared_dir / "conformance").rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            json.loads(line, parse_float=lambda text: texts.add(text))  # each double's text
    assert len(texts) > 100
    for text in texts:
        assert _bits(rapidjson_double(text)) == _bits(parse_number(text)), text
        value = float(text)
        if math.isfinite(value):
            assert _bits(as_batsim_reads(value)) == _bits(parse_number(repr(value))), text


# Reference doubles for rapidjson's own reading: obtained by compiling a C++ program that
# calls rapidjson 1.1.0's ``Document::Parse`` (default flags) on each text and prints
# ``GetDouble()`` with ``%a``; they are independent of the Python code under test.

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
