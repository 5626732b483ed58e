"""Numbers as Batsim 4.2.1 writes and reads them on the wire.

* Batsim writes every double of its messages with ``printf("%6f")`` (its
  ``Writer::Double`` in ``protocol.hpp``): six decimals, ``"now":636.776000``.
  Integers stay integers. A scheduler only ever sees those digits, so the
  in-process driver hands it the same values (:func:`six_decimals`).
* Batsim reads the scheduler's numbers with rapidjson's default parser
  (``Reader::ParseNumber`` without ``kParseFullPrecisionFlag``), which is not
  always correctly rounded for 16-17 significant digits:
  :func:`rapidjson_double` reproduces it (rapidjson 1.1, unchanged since).
* Batsim's job submitter computes its sleeps in ``long double``
  (``job_submitter.cpp``): :func:`long_double_difference`.
"""

from __future__ import annotations

import json
import math
import re
from fractions import Fraction
from typing import Any

#: rapidjson's fast path stops accumulating digits into an integer above 2^53 - 1.
_FAST_PATH_LIMIT = (1 << 53) - 1
_U64_DIV10 = 0x1999999999999999  # (2^64 - 1) / 10
_U32_DIV10 = 429496729  # (2^32 - 1) / 10
#: A JSON number without exponent.
_PLAIN_DECIMAL = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?")
#: The largest power of ten that is exactly a double.
_EXACT_POW10 = 22


def six_decimals(value: float) -> float:
    """The value a JSON parser reads back from Batsim's ``%f`` text of ``value``."""
    return float(f"{value:f}")


def encode(value: Any) -> str:
    """JSON text as Batsim's writer makes it: no spaces, doubles with six decimals.

    Dict key order is kept (Batsim's is the insertion order of its writers).
    """
    if isinstance(value, float):
        return f"{value:f}"
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(str(k), ensure_ascii=False)}:{encode(v)}"
                              for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(encode(v) for v in value) + "]"
    raise TypeError(f"cannot encode {type(value).__name__}")


def decoded(value: Any) -> Any:
    """What a JSON parser gets from :func:`encode` ``(value)`` (doubles to six decimals)."""
    if isinstance(value, float):
        return six_decimals(value)
    if isinstance(value, dict):  # strings and integers, the usual values, taken as they are
        return {k: v if type(v) is str or type(v) is int else decoded(v)
                for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [decoded(v) for v in value]
    return value


def _pow10(exponent: int) -> float:
    """rapidjson's ``internal::Pow10``: the double nearest 10^exponent (0 <= exponent <= 308)."""
    return float(f"1e{exponent}")


def rapidjson_double(text: str) -> float:
    """The double rapidjson's default number parser (Batsim's ``Document::Parse``) reads.

    Follows ``GenericReader::ParseNumber`` with default flags on a 64-bit
    build: up to 2^53 - 1 the significand is an exact integer; beyond, digits
    are accumulated in double arithmetic (``d = d * 10 + digit``, at most 17
    significant ones); the decimal exponent is then applied by one
    multiplication or division by a power of ten (``StrtodNormalPrecision``).

    A plain decimal whose digits fit the exact significand is read by
    :func:`_plain_decimal`, the same arithmetic in two operations: it costs 6 us against
    13 us for the digit loop of :func:`parse_number`, which reads the others.
    """
    s = text.strip()
    if _PLAIN_DECIMAL.fullmatch(s):
        value = _plain_decimal(s)
        if value is not None:
            return value
    return parse_number(s, text)


def parse_number(s: str, text: str | None = None) -> float:
    """``GenericReader::ParseNumber`` digit by digit: the general path of
    :func:`rapidjson_double` for ``s`` (no surrounding white space; ``text``, the
    number as given, is named in errors)."""
    text = s if text is None else text
    pos = 0
    minus = s.startswith("-")
    if minus:
        pos = 1
    n = len(s)
    i = 0
    significand = 0
    use64 = False
    use_double = False
    d = 0.0
    if pos < n and s[pos] == "0":
        pos += 1
    elif pos < n and s[pos].isdigit():
        i = ord(s[pos]) - 48
        pos += 1
        limit, last = (214748364, "8") if minus else (_U32_DIV10, "5")
        while pos < n and s[pos].isdigit():
            if i >= limit and (i != limit or s[pos] > last):
                use64 = True
                break
            i = i * 10 + ord(s[pos]) - 48
            significand += 1
            pos += 1
    else:
        raise ValueError(f"not a JSON number: {text!r}")
    i64 = i
    if use64:
        limit64, last = (0x0CCCCCCCCCCCCCCC, "8") if minus else (_U64_DIV10, "5")
        while pos < n and s[pos].isdigit():
            if i64 >= limit64 and (i64 != limit64 or s[pos] > last):
                d = float(i64)
                use_double = True
                break
            i64 = i64 * 10 + ord(s[pos]) - 48
            significand += 1
            pos += 1
    if use_double:
        while pos < n and s[pos].isdigit():
            d = d * 10 + (ord(s[pos]) - 48)
            pos += 1
    exp_frac = 0
    if pos < n and s[pos] == ".":
        pos += 1
        if not use_double:
            while pos < n and s[pos].isdigit():
                if i64 > _FAST_PATH_LIMIT:
                    break
                i64 = i64 * 10 + ord(s[pos]) - 48
                exp_frac -= 1
                if i64 != 0:
                    significand += 1
                pos += 1
            d = float(i64)
            use_double = True
        while pos < n and s[pos].isdigit():
            if significand < 17:
                d = d * 10.0 + (ord(s[pos]) - 48)
                exp_frac -= 1
                if d > 0.0:
                    significand += 1
            pos += 1
    exp = 0
    if pos < n and s[pos] in "eE":
        pos += 1
        if not use_double:
            d = float(i64)
            use_double = True
        exp_minus = False
        if pos < n and s[pos] in "+-":
            exp_minus = s[pos] == "-"
            pos += 1
        start = pos
        while pos < n and s[pos].isdigit():
            pos += 1
        if start == pos:
            raise ValueError(f"not a JSON number: {text!r}")
        exp = int(s[start:pos])
        if exp_minus:
            exp = -exp
    if pos != n:
        raise ValueError(f"not a JSON number: {text!r}")
    if not use_double:
        value = float(i64)
        return -value if minus else value
    p = exp + exp_frac
    if p < -308:
        d = _fast_path(d, -308)
        d = _fast_path(d, p + 308)
    else:
        d = _fast_path(d, p)
    return -d if minus else d


def _plain_decimal(s: str) -> float | None:
    """:func:`rapidjson_double` of a JSON number without exponent whose digits all fit
    the exact integer significand; None for any other.

    ``ParseNumber`` stops taking fraction digits into its 64-bit significand
    once it exceeds 2^53 - 1 (tested before each digit). When even the digits
    before the last one stay within it, every digit is taken: the significand
    is the integer of all the digits (up to about 9e16), converted to double
    once (rounded to nearest even, as ``static_cast<double>``), then divided
    by 10^k, k the number of fraction digits (``StrtodNormalPrecision``: one
    division by ``Pow10(k)``, exact for k <= 22). This is the same arithmetic
    as the digit loop of :func:`rapidjson_double`, which takes the others.
    """
    negative = s.startswith("-")
    whole, _, fraction = (s[1:] if negative else s).partition(".")
    if len(fraction) > _EXACT_POW10 or len(whole) > 16 \
            or int(whole + fraction[:-1]) > _FAST_PATH_LIMIT:
        return None  # (16 digits or fewer before the point: the integer stays short)
    value = float(int(whole + fraction))
    if fraction:
        value /= _pow10(len(fraction))
    return -value if negative else value


def _fast_path(significand: float, exponent: int) -> float:
    if exponent < -308:
        return 0.0
    if exponent >= 0:
        return significand * _pow10(exponent)
    return significand / _pow10(-exponent)


def as_batsim_reads(value: float | int) -> float:
    """A scheduler's number after its JSON encoding (Python's ``repr``) and Batsim's parse.

    A ``repr`` of at most 16 characters and no exponent has at most 15 significant
    digits: the significand is an exact integer and one division by an exact power of
    ten rounds correctly, giving back ``value`` itself. Taking it at once costs 1.2 us
    against 7 us for the reading of its text (13,000 answers' numbers in the DAS2 FS1
    case: about 4 % of its CPU time).
    """
    if isinstance(value, bool):
        raise TypeError("a boolean is not a number")
    if isinstance(value, int):
        return float(value)
    if not math.isfinite(value):
        return value
    text = repr(float(value))
    if len(text) <= 16 and "e" not in text:
        return value
    return rapidjson_double(text)


def parse_answer(text: str) -> Any:
    """Decode a scheduler's answer text with Batsim's number parsing (:func:`rapidjson_double`)."""
    return json.loads(text, parse_float=rapidjson_double)


_LD_MANTISSA_BITS = 64


def long_double_difference(a: float, b: float) -> float:
    """``(double)((long double)a - (long double)b)`` on x86-64 (80-bit long double).

    The exact difference is rounded to a 64-bit significand, then to a double.
    """
    exact = a - b
    if _two_sum_exact(a, b, exact):
        return exact
    value = Fraction(a) - Fraction(b)
    return float(_round_significand(value, _LD_MANTISSA_BITS))


def _two_sum_exact(a: float, b: float, s: float) -> bool:
    """True when ``s = fl(a - b)`` is the exact difference (Knuth's TwoSum error is 0)."""
    nb = -b
    bb = s - a
    err = (a - (s - bb)) + (nb - bb)
    return err == 0.0


def _round_significand(value: Fraction, bits: int) -> Fraction:
    """``value`` rounded to nearest (ties to even) with a ``bits``-bit significand."""
    if value == 0:
        return value
    sign = -1 if value < 0 else 1
    magnitude = abs(value)
    exponent = magnitude.numerator.bit_length() - magnitude.denominator.bit_length()
    if Fraction(2) ** exponent > magnitude:
        exponent -= 1
    scale = Fraction(2) ** (exponent - bits + 1)
    scaled = magnitude / scale
    floor = scaled.numerator // scaled.denominator
    rest = scaled - floor
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and floor % 2 == 1):
        floor += 1
    return sign * floor * scale
