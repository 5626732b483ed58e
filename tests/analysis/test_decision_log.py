"""The SPEC section 7 decision log: columns, CSV round trip, empty cells."""

from __future__ import annotations

import csv
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from snficon.analysis.decision_log import (
    COLUMNS,
    DecisionLog,
    DecisionRow,
    iter_decision_log,
    read_decision_log,
)
from snficon.core.names import TRIGGERS, Trigger
from snficon.errors import InputError

#: SPEC section 7, column by column.
SPEC_COLUMNS = (
    "time", "trigger", "mode", "spare_planning_point", "gate_open",
    "arrival_n", "arrival_mean", "arrival_cv", "arrival_lag1", "arrival_ks",
    "arrival_ks_limit", "arrival_accepted",
    "service_n", "service_mean", "service_cv", "service_lag1", "service_ks",
    "service_ks_limit", "service_accepted",
    "lam", "mu", "pi_a", "horizon", "target_x", "target_w", "target_e", "target_j",
    "starts", "wakes", "shutdowns", "wall_us")
#: The paper's section V-A diagnostics that SPEC 7 does not list, after its columns.
EXTRA_COLUMNS = (
    "screen_reason", "ratio_mean", "ratio_sigma", "size_mean", "size_max", "planned_jobs",
    "target_below_j", "target_below_w", "target_below_e",
    "target_above_j", "target_above_w", "target_above_e", "kills")


def _rows() -> list[DecisionRow]:
    return [
        DecisionRow(time=0.0, trigger=Trigger.INITIAL, mode="fallback",
                    starts=2, wakes=0, shutdowns=0, wall_us=41.5),
        DecisionRow(time=1 / 3, trigger=Trigger.ARRIVAL, mode="icon",
                    spare_planning_point=True, gate_open=False, arrival_n=30,
                    arrival_mean=612.123456789, arrival_cv=0.1 + 0.2, arrival_lag1=-0.05,
                    arrival_ks=0.07, arrival_ks_limit=0.24, arrival_accepted=True,
                    service_n=29, service_mean=1e-7, service_cv=1.0, service_lag1=0.0,
                    service_ks=0.3, service_ks_limit=0.25, service_accepted=False,
                    lam=1 / 612.123456789, mu=2.5e-4, pi_a=0.7, horizon=7200.0, target_x=3,
                    target_w=12.5, target_e=1.0e6, target_j=5.0e6 + 12.5,
                    starts=1, wakes=2, shutdowns=1, wall_us=1234.0,
                    screen_reason="service:cv,ks", ratio_mean=-0.69, ratio_sigma=0.25,
                    size_mean=2.5, size_max=16, planned_jobs=0, target_below_j=5.1e6,
                    target_below_w=20.0, target_below_e=0.9e6, kills=1),
    ]


def _logged(path: Path) -> Path:
    """The rows of :func:`_rows` written as a decision-log CSV at ``path``."""
    log = DecisionLog()
    for row in _rows():
        log.append(row)
    return log.to_csv(path)


def test_columns_are_spec_sections_7():
    assert COLUMNS == SPEC_COLUMNS + EXTRA_COLUMNS
    assert TRIGGERS == ("initial", "arrival", "completion", "callback", "transition")


def test_round_trip_keeps_every_value(tmp_path: Path):
    log = DecisionLog()
    for row in _rows():
        log.append(row)
    assert len(log) == 2
    assert list(log.rows()) == _rows()
    path = log.to_csv(tmp_path / "log" / "decisions.csv")
    assert [DecisionRow(**record) for record in read_decision_log(path)] == _rows()


def test_none_is_an_empty_cell_and_header_is_spec_order(tmp_path: Path):
    log = DecisionLog()
    log.append(_rows()[0])
    path = log.to_csv(tmp_path / "decisions.csv")
    with open(path, newline="") as stream:
        header, cells = list(csv.reader(stream))
    assert tuple(header) == SPEC_COLUMNS + EXTRA_COLUMNS
    assert cells == (["0.0", "initial", "fallback"] + [""] * 24 + ["2", "0", "0", "41.5"]
                     + [""] * 12 + ["0"])


def test_numpy_scalars_are_written_as_plain_numbers(tmp_path: Path):
    log = DecisionLog()
    log.append(DecisionRow(time=np.float64(2.5), trigger="callback", mode="icon",
                           gate_open=np.bool_(True), target_x=np.int64(4),
                           starts=0, wakes=0, shutdowns=0, wall_us=1.0))
    record = read_decision_log(log.to_csv(tmp_path / "d.csv"))[0]
    assert (record["time"], record["gate_open"], record["target_x"]) == (2.5, True, 4)


def test_empty_log_has_only_the_header(tmp_path: Path):
    path = DecisionLog().to_csv(tmp_path / "d.csv")
    assert path.read_text() == ",".join(SPEC_COLUMNS + EXTRA_COLUMNS) + "\n"
    assert read_decision_log(path) == []


def test_a_log_with_a_path_streams_the_same_bytes_and_appears_only_when_closed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(DecisionLog, "FLUSH_EVERY", 3)  # several flushes over the rows
    rows = [replace(row, time=float(i)) for i in range(7) for row in _rows()]
    kept, streamed = DecisionLog(), DecisionLog(tmp_path / "out" / "decisions.csv")
    for row in rows:
        kept.append(row)
        streamed.append(row)
    assert not (tmp_path / "out" / "decisions.csv").exists()
    with pytest.raises(RuntimeError, match="read it back"):
        list(streamed.rows())
    path = streamed.close()
    assert path.read_bytes() == kept.to_csv(tmp_path / "kept.csv").read_bytes()
    assert [DecisionRow(**record) for record in read_decision_log(path)] == rows
    assert sorted(p.name for p in path.parent.iterdir()) == ["decisions.csv"]  # no temporary


def test_a_streamed_log_without_rows_is_the_header(tmp_path: Path):
    path = DecisionLog(tmp_path / "d.csv").close()
    assert path.read_text() == ",".join(SPEC_COLUMNS + EXTRA_COLUMNS) + "\n"


def test_bad_trigger_or_mode_is_refused():
    with pytest.raises(ValueError, match="'start'"):
        DecisionRow(time=0.0, trigger="start", mode="icon", starts=0, wakes=0, shutdowns=0,
                    wall_us=0.0)
    with pytest.raises(ValueError, match="'ipm'"):
        DecisionRow(time=0.0, trigger="initial", mode="ipm", starts=0, wakes=0, shutdowns=0,
                    wall_us=0.0)


def test_bad_files_are_named(tmp_path: Path):
    with pytest.raises(InputError, match="absent.csv: missing"):
        read_decision_log(tmp_path / "absent.csv")
    bad = tmp_path / "bad.csv"
    bad.write_text("time,trigger\n0,initial\n")
    with pytest.raises(InputError, match="bad.csv: not a decision log"):
        read_decision_log(bad)
    cells = ["0.0", "initial", "icon", "yes"] + [""] * 23 + ["0", "0", "0", "1.0"] + [""] * 13
    bad.write_text(",".join(SPEC_COLUMNS + EXTRA_COLUMNS) + "\n" + ",".join(cells) + "\n")
    with pytest.raises(InputError, match="bad.csv: line 2: spare_planning_point"):
        read_decision_log(bad)


def test_the_streamed_reader_gives_the_rows_one_at_a_time_and_names_a_bad_line(tmp_path):
    path = _logged(tmp_path / "d.csv")
    rows = iter_decision_log(path)
    assert not isinstance(rows, list)
    assert list(rows) == read_decision_log(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join([*lines, "1,2"]) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=rf"line {len(lines) + 1}: 2 cells"):
        list(iter_decision_log(path))


def test_a_few_columns_are_the_same_cells_as_the_whole_row(tmp_path):
    path = _logged(tmp_path / "d.csv")
    names = ("time", "mode", "spare_planning_point", "target_x")
    whole = read_decision_log(path)
    assert list(iter_decision_log(path, names)) == [
        {name: row[name] for name in names} for row in whole]
    with pytest.raises(ValueError, match="not decision-log columns: \\['nope'\\]"):
        list(iter_decision_log(path, ("time", "nope")))
    lines = path.read_text(encoding="utf-8").splitlines()
    cells = lines[1].split(",")
    cells[COLUMNS.index("spare_planning_point")] = "yes"
    path.write_text("\n".join([lines[0], ",".join(cells)]) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="line 2: spare_planning_point"):
        list(iter_decision_log(path, names))
    assert list(iter_decision_log(path, ("time",))) == [{"time": whole[0]["time"]}]


def _random_columns(rng: np.random.Generator) -> dict[str, object]:
    """Columns of one invocation as a policy fills them: a random subset, with the
    kinds of value policies put there (numpy scalars, bools, None, text)."""
    columns: dict[str, object] = {"starts": int(rng.integers(5)), "wakes": np.int64(1),
                                  "shutdowns": 0}
    for name in COLUMNS:
        if name in ("time", "trigger", "wall_us", "starts", "wakes", "shutdowns"):
            continue
        if rng.random() < 0.5:
            continue
        if name == "mode":
            columns[name] = str(rng.choice(["icon", "fallback"]))
        elif name == "screen_reason":
            columns[name] = str(rng.choice(["", "arrival:cv,ks", "service:n<n_min"]))
        elif name in ("spare_planning_point", "gate_open", "arrival_accepted",
                      "service_accepted"):
            columns[name] = rng.choice([True, False, np.True_, None])
        elif name.endswith("_n") or name in ("target_x", "size_max", "planned_jobs", "kills"):
            columns[name] = rng.choice([3, np.int64(7), None])
        else:
            columns[name] = rng.choice([0.1 + 0.2, np.float64(1 / 3), 1e-300, None,
                                        float(rng.normal())])
    return columns


def test_recording_columns_writes_the_text_of_the_rows(tmp_path):
    """record() fills the cells by column index; the same rows appended as records
    (each cell through _cell) must give the same file, byte for byte."""
    rng = np.random.default_rng(5)
    streamed, appended = DecisionLog(tmp_path / "r.csv"), DecisionLog(tmp_path / "a.csv")
    for step in range(300):
        columns = _random_columns(rng)
        time, wall_us = step / 7.0, np.float64(rng.random() * 100)
        trigger = str(rng.choice(TRIGGERS))
        streamed.record(time, trigger, wall_us, columns)
        appended.append(DecisionRow(time=time, trigger=trigger, wall_us=wall_us, **columns))
    streamed.close(), appended.close()
    text = (tmp_path / "r.csv").read_text()
    assert text == (tmp_path / "a.csv").read_text()
    assert len(text.splitlines()) == 301
    log = DecisionLog(tmp_path / "bad.csv")
    for bad in ({"starts": 0, "wakes": 0, "shutdowns": 0, "nope": 1},
                {"starts": 0, "wakes": 0, "shutdowns": 0, "time": 1.0}):
        with pytest.raises(TypeError, match="not decision-log columns"):
            log.record(0.0, Trigger.ARRIVAL, 1.0, bad)
    assert len(log) == 0
