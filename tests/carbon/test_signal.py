"""Carbon signal files: checks, gap rules, mapping onto simulated time, the synthetic signal."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from snficon.carbon.mapping import MappedSignal
from snficon.carbon.series import StepSeries
from snficon.carbon.signal import (
    format_instant,
    parse_instant,
    parse_signal,
    read_signal,
    signal_csv_text,
)
from snficon.carbon.synthetic import DiurnalParams, synthetic_diurnal
from snficon.errors import InputError

HEADER = "timestamp_utc,gco2_per_kwh\n"


def rows(*pairs: tuple[str, object]) -> str:
    return HEADER + "".join(f"2023-01-01T{t}Z,{v}\n" for t, v in pairs)


class TestStepSeries:
    def test_integral_is_exact_against_hand_sums(self):
        s = StepSeries(10.0, 5.0, np.array([1.0, 3.0, 2.0]))
        assert s.end_s == 25.0 and s.total == 30.0
        # [12, 21]: 3 s at 1, 5 s at 3, 1 s at 2.
        assert s.integral(12.0, 21.0) == pytest.approx(3 + 15 + 2, abs=1e-12)
        assert np.allclose(s.cumulative(np.array([10.0, 15.0, 25.0])), [0.0, 5.0, 30.0])
        assert s.at(15.0) == 3.0 and s.at(25.0) == 2.0
        assert s.mean(16.0, 16.0) == 3.0

    def test_outside_the_range_is_refused(self):
        s = StepSeries(0.0, 1.0, np.ones(3))
        with pytest.raises(ValueError, match="outside"):
            s.cumulative(3.5)

    def test_window_covers_the_span_and_integrates_the_same(self):
        s = StepSeries(0.0, 10.0, np.arange(1.0, 11.0))
        w = s.window(23.0, 57.0)
        assert w.t0_s <= 23.0 and w.end_s >= 57.0
        assert w.integral(23.0, 57.0) == pytest.approx(s.integral(23.0, 57.0))


class TestFileChecks:
    @pytest.mark.parametrize(("text", "message"), [
        (rows(("00:00", 1), ("01:00", 2), ("00:30", 3)), r"line 4: unsorted"),
        (rows(("00:00", 1), ("00:30", 2), ("00:30", 3)), r"line 4: duplicate"),
        (rows(("00:00", 1), ("00:30", 2), ("01:00", 3), ("01:45", 4)),
         r"line 5: irregular step: 2700 s .* step 1800 s"),
        (rows(("00:00", 1), ("00:30", "high")), r"line 3: gco2_per_kwh is not a number"),
        (rows(("00:00", 1), ("00:30", -4)), r"line 3: gco2_per_kwh must be finite and >= 0"),
        (rows(("00:00", 1), ("00:30", "nan")), r"line 3: gco2_per_kwh must be finite"),
        (HEADER + "yesterday,4\n2023-01-01T00:00Z,5\n", r"line 2: timestamp_utc: not an ISO"),
        ("time,value\n2023-01-01T00:00Z,5\n", r"line 1: header lacks"),
        (rows(("00:00", 1)), r"1 data row"),
        ("", r"empty"),
        (HEADER + "2023-01-01T00:00Z\n", r"line 2: expected 2 columns"),
    ])
    def test_errors_name_the_file_and_line(self, text: str, message: str):
        with pytest.raises(InputError, match=f"sig.csv: {message}"):
            parse_signal(text, "sig.csv")

    def test_missing_file(self, tmp_path: Path):
        with pytest.raises(InputError, match="not found"):
            read_signal(tmp_path / "nope.csv")

    def test_comments_extra_columns_and_offsets(self):
        text = ("# synthetic test data\ntimestamp_utc,gco2_per_kwh,forecast\n"
                "2023-01-01T01:00:00+01:00,7,1\n2023-01-01T00:30:00,9,2\n")
        s = parse_signal(text, "x.csv")
        assert s.synthetic and s.label == "synthetic test data"
        assert format_instant(s.first_s) == "2023-01-01T00:00:00Z"  # 01:00+01:00
        assert list(s.series.values) == [7.0, 9.0] and s.step_s == 1800.0

    def test_most_common_spacing_is_the_step(self):
        """One 30-min hole in a 15-min file is a gap, not a 15-min step in a 30-min file."""
        s = parse_signal(rows(("00:00", 1), ("00:15", 2), ("00:45", 4), ("01:00", 5)), "q.csv")
        assert s.step_s == 900.0 and s.filled_intervals == 1


class TestGaps:
    TEXT = rows(("00:00", 100), ("00:30", 110), ("02:00", 200), ("02:30", 50))

    def test_linear(self):
        s = parse_signal(self.TEXT, "g.csv", "linear")
        # 110 at 00:30, 200 at 02:00: 01:00 and 01:30 on the line, a third and two thirds.
        assert np.allclose(s.series.values, [100, 110, 140, 170, 200, 50])
        assert [(g.intervals, g.line) for g in s.gaps] == [(2, 4)]
        assert format_instant(s.gaps[0].first_missing_s) == "2023-01-01T01:00:00Z"
        assert list(s.measured) == [True, True, False, False, True, True]

    def test_hold(self):
        s = parse_signal(self.TEXT, "g.csv", "hold")
        assert np.allclose(s.series.values, [100, 110, 110, 110, 200, 50])

    def test_refuse_and_unknown_rule(self):
        with pytest.raises(InputError, match="g.csv: line 4: gap of 2 interval"):
            parse_signal(self.TEXT, "g.csv", "refuse")
        with pytest.raises(InputError, match="unknown gap rule 'spline'"):
            parse_signal(self.TEXT, "g.csv", "spline")

    def test_the_gb_2023_file_has_the_gaps_its_readme_lists(self, shared_dir: Path):
        s = read_signal(shared_dir / "data" / "carbon" / "gb-neso-national-2023.csv")
        found = [(format_instant(g.first_missing_s), g.intervals) for g in s.gaps]
        assert found == [("2023-01-26T13:30:00Z", 5), ("2023-01-31T01:00:00Z", 1),
                         ("2023-06-07T09:30:00Z", 4), ("2023-10-20T22:00:00Z", 91)]
        assert s.series.size == 17520 and int(s.measured.sum()) == 17419
        assert s.period_s == 365 * 86400 and not s.synthetic
        measured = s.series.values[s.measured]
        assert (measured.min(), measured.max()) == (26.0, 309.0)
        assert measured.mean() == pytest.approx(152.18, abs=0.005)  # the README's figures


class TestMapping:
    SIGNAL = parse_signal(rows(("00:00", 100), ("01:00", 300), ("02:00", 200)), "m.csv")

    def test_time_zero_is_the_start_instant(self):
        m = MappedSignal(self.SIGNAL, parse_instant("2023-01-01T00:30Z"))
        assert m.at(0.0) == 100.0 and m.at(1800.0) == 300.0
        # [0, 5400): 1800 s at 100, 3600 at 300.
        assert m.integral(0.0, 5400.0) == pytest.approx(1800 * 100 + 3600 * 300)

    def test_wrap_around_repeats_the_signal(self):
        m = MappedSignal(self.SIGNAL, parse_instant("2023-01-01T02:00Z"))
        assert m.at(3600.0) == 100.0 and m.at(3 * 3600 + 3600.0) == 100.0
        # Three whole periods of 600 x 3600 each, from any start.
        assert m.integral(1234.0, 1234.0 + 3 * 10800) == pytest.approx(3 * 600 * 3600)
        w = m.window(1000.0, 8000.0)
        assert w.integral(1000.0, 8000.0) == pytest.approx(m.integral(1000.0, 8000.0))

    def test_no_wrap_refuses_past_the_end(self):
        m = MappedSignal(self.SIGNAL, parse_instant("2023-01-01T02:00Z"), wrap=False)
        assert m.integral(0.0, 3600.0) == pytest.approx(200 * 3600)
        with pytest.raises(InputError, match="m.csv: simulated time t=3601 s is "
                                             "2023-01-01T03:00:01Z, outside the signal"):
            m.integral(0.0, 3601.0)

    def test_start_outside_the_signal_is_refused(self):
        with pytest.raises(InputError, match="carbon start 2024-01-01T00:00:00Z is outside"):
            MappedSignal(self.SIGNAL, parse_instant("2024-01-01"))
        with pytest.raises(InputError, match="carbon start: not an ISO 8601 instant"):
            parse_instant("March", "carbon start")

    def test_against_a_fine_sum(self):
        """The exact integral against a Riemann sum at 1 s over 20 h with wrap-arounds."""
        m = MappedSignal(self.SIGNAL, parse_instant("2023-01-01T01:17Z"))
        t = np.arange(0.0, 72000.0) + 0.5
        assert m.integral(0.0, 72000.0) == pytest.approx(float(np.sum(m.at(t))), rel=1e-12)


class TestSynthetic:
    def test_seeded_labelled_and_read_back(self):
        a = synthetic_diurnal(DiurnalParams(days=3, seed=4))
        b = synthetic_diurnal(DiurnalParams(days=3, seed=4))
        assert np.array_equal(a.series.values, b.series.values)
        assert not np.array_equal(a.series.values,
                                  synthetic_diurnal(DiurnalParams(days=3, seed=5)).series.values)
        text = signal_csv_text(a)
        assert text.startswith("# synthetic diurnal carbon intensity, NOT measured data")
        back = parse_signal(text, "syn.csv")
        assert back.synthetic and np.array_equal(back.series.values, a.series.values)

    def test_the_daily_cycle_peaks_in_the_evening(self):
        s = synthetic_diurnal(DiurnalParams(days=60, noise_sd=0.0))
        by_hour = s.series.values.reshape(-1, 48).mean(axis=0)
        assert np.argmax(by_hour) == 36 and np.argmin(by_hour) == 12  # 18:00 and 06:00
        assert by_hour.max() - by_hour.min() == pytest.approx(120.0, abs=0.2)
