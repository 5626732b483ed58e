"""How a part's carbon-signal options are filled in from the run's signal (``carbon_signal``)."""

from __future__ import annotations

import pytest

from snficon.core.carbon_signal import (
    NO_SIGNAL,
    fill_signal_options,
    load_signal,
    signal_option_names,
)
from snficon.errors import InputError

RUN = {"path": "grid.csv", "start": "2024-01-01T00:00:00Z", "fill": "previous", "wrap": False}


def test_an_empty_signal_option_takes_the_runs_signal_start_fill_and_wrap():
    """coast_signal is none: it and its three companions take the run's values; the other
    options stay as they were, and the given dict is not changed."""
    options = {"coast_signal": NO_SIGNAL, "coast_window": 3600}
    filled = fill_signal_options(options, ["coast_signal", "coast_window"], **RUN)
    assert filled == {"coast_signal": "grid.csv", "coast_start": "2024-01-01T00:00:00Z",
                      "coast_fill": "previous", "coast_wrap": False, "coast_window": 3600}
    assert options == {"coast_signal": NO_SIGNAL, "coast_window": 3600}


def test_an_absent_signal_option_counts_as_none_and_addressed_keys_keep_their_part():
    filled = fill_signal_options({}, ["icon.jx_signal"], **RUN)
    assert filled == {"icon.jx_signal": "grid.csv", "icon.jx_start": "2024-01-01T00:00:00Z",
                      "icon.jx_fill": "previous", "icon.jx_wrap": False}


def test_a_signal_option_already_given_keeps_its_own_values():
    options = {"jx_signal": "own.csv", "jx_start": "first", "jx_fill": "zero", "jx_wrap": True}
    assert fill_signal_options(options, ["jx_signal"], **RUN) == options


def test_signal_option_names_are_the_signal_keys_flat_or_addressed():
    params = {"coast_signal": "a", "coast_start": "first", "icon.jx_signal": "b",
              "timeout": 7200, "other.signal": "c"}
    assert signal_option_names(params) == ["coast_signal", "icon.jx_signal"]


def test_no_signal_named_is_an_input_error_naming_the_three_ways_to_give_one():
    with pytest.raises(InputError, match="COAST needs a carbon-intensity signal.*--carbon FILE"
                                         ".*carbon axis.*coast_signal"):
        load_signal("COAST", "coast_", NO_SIGNAL, "first", "previous", True)
