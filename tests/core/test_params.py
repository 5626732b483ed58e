"""Options of the policy parts: types, ranges, unknown names (``snficon.core.params``).

Every bad option must be refused before a run starts, with the rule it
breaks; the same checks serve ``snficon run --set``, campaign files, robin
files and pybatsim ``-o`` (they all build the parts' parameters dataclasses).
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from snficon.core.params import IconParams, IpmParams, option, params_from_options
from snficon.errors import InputError
from snficon.part_registry import compose
from snficon.policy_table import POLICIES, resolved_options


def test_defaults_are_table_one():
    """Table I of the paper: alpha 5000, beta 1, T_M 2 h, timeout 2 h, n_min 3..."""
    params = params_from_options(IconParams, {})
    assert (params.alpha, params.beta, params.t_m, params.timeout, params.n_min) == (
        5000.0, 1.0, 7200.0, 7200.0, 3)
    assert params_from_options(IpmParams, {"timeout": 600}).timeout == 600.0


@pytest.mark.parametrize(("options", "message"), [
    ({"beta": -1}, "'beta': -1 is out of range (must be >= 0)"),
    ({"rho_a": 2}, "'rho_a': 2 is out of range (must be in (0, 1])"),
    ({"rho_a": 0}, "'rho_a': 0 is out of range (must be in (0, 1])"),
    ({"timeout": -5}, "'timeout': -5 is out of range (must be >= 0)"),
    ({"s_min": 10, "s_max": 2}, "s_min must be <= s_max"),
    ({"n_min": 2.5}, "'n_min': 2.5 is not a whole number"),
    ({"alpha": True}, "'alpha': True is not a number"),
    ({"alpha": "high"}, "'alpha': 'high' is not a number"),
    ({"alpha": float("nan")}, "'alpha': NaN is not a number"),
    ({"alpha": float("inf")}, "'alpha': inf is out of range"),
    ({"gate": 1}, "'gate': 1 is not a boolean"),
    ({"gate": "false"}, "'gate': 'false' is not a boolean"),
    ({"t_m": 0}, "'t_m': 0 is out of range (must be > 0)"),
    ({"delta_rho": 1.5}, "'delta_rho': 1.5 is out of range (must be in [0, 1])"),
    ({"n_min": 5, "n_max": 4}, "n_min must be <= n_max"),
    ({"alhpa": 10}, "unknown option 'alhpa' for icon; did you mean 'alpha'?"),
    ({"timeout": None}, "'timeout': null is not allowed"),
])
def test_bad_options_are_refused_with_the_rule(options, message):
    with pytest.raises(InputError) as error:
        params_from_options(IconParams, options, "icon")
    assert message in str(error.value)


def test_whole_floats_are_whole_numbers_and_none_is_the_platform_size():
    params = params_from_options(IconParams, {"n_min": 4.0, "s_max": None, "s_min": 0})
    assert params.n_min == 4 and isinstance(params.n_min, int)
    assert params.s_max is None and params.s_min == 0


def test_an_unknown_flat_option_names_the_composition_and_the_closest_name():
    with pytest.raises(InputError, match="unknown option 'timout' for snf\\+ipm; did you mean "
                                         "'timeout'\\?"):
        compose("snf", "ipm", (), {"timout": 10})
    with pytest.raises(InputError, match="unknown option 'alpha' for snf\\+ipm"):
        compose("snf", "ipm", (), {"alpha": 10})  # an ICON option on an IPM policy


def test_options_may_name_their_part():
    composition = compose("fcfs-easy", "icon", (), {"icon.alpha": 10, "beta": 2})
    params = composition.params["icon"]
    assert (params.alpha, params.beta) == (10.0, 2.0)
    with pytest.raises(InputError, match="'ipm' is not a part of this policy"):
        compose("snf", "icon", (), {"ipm.timeout": 10})


def test_unknown_parts_are_refused_with_the_known_ones():
    with pytest.raises(InputError, match="unknown power 'sleepy' \\(known: ipm, icon"):
        compose("snf", "sleepy")
    with pytest.raises(InputError, match="unknown order 'icon'"):
        compose("icon", "ipm")


def test_every_named_policy_resolves_its_presets():
    """NG, NF and NGNF are presets of SNF-ICON, not other code."""
    assert resolved_options("snficon-ng")["gate"] is False
    assert resolved_options("snficon-nf")["fallback"] is False
    both = resolved_options("snficon-ngnf")
    assert (both["gate"], both["fallback"]) == (False, False)
    assert resolved_options("snficon") == resolved_options("snficon-ng", {"gate": True})
    for name, entry in POLICIES.items():
        composition = entry.composition()
        assert composition.order == entry.order and composition.power == entry.power, name


def test_a_changed_part_is_part_of_the_resolved_options():
    """``order`` in the options makes FCFS/EASY with the warm-spare controller; asking for
    the policy's own order is the same run as asking nothing."""
    resolved = resolved_options("snficon", {"order": "fcfs-easy"})
    assert resolved["order"] == "fcfs-easy" and resolved["alpha"] == 5000.0
    assert resolved_options("snficon", {"order": "snf"}) == resolved_options("snficon")
    assert resolved_options("snfIpm", {"power": "icon"})["power"] == "icon"


@dataclass(frozen=True)
class _TextParams:
    mode: str = option("fast", choices=("fast", "slow"))
    field_name: str = option("reqtime")


@pytest.mark.parametrize(("options", "message"), [
    ({"mode": "slwo"}, "'mode': 'slwo' is not one of fast, slow; did you mean 'slow'?"),
    ({"mode": "other"}, "'mode': 'other' is not one of fast, slow"),
    ({"mode": 3}, "'mode': 3 is not text (must be one of fast, slow)"),
    ({"field_name": ""}, "'field_name': empty text is not allowed"),
    ({"field_name": 12}, "'field_name': 12 is not text (must be text)"),
])
def test_text_options_take_their_choices_or_any_nonempty_text(options, message):
    with pytest.raises(InputError) as error:
        params_from_options(_TextParams, options, "text")
    assert message in str(error.value)


def test_text_options_are_kept_as_given():
    params = params_from_options(_TextParams, {"mode": "slow", "field_name": "limit_s"})
    assert (params.mode, params.field_name) == ("slow", "limit_s")
    assert params_from_options(_TextParams, {}).mode == "fast"


def test_a_default_outside_the_choices_is_a_programming_error():
    with pytest.raises(ValueError, match="default 'x' is not one of the choices"):
        option("x", choices=("a", "b"))


def test_the_time_limit_layer_options_compose_with_any_policy():
    """``layers`` adds the layer; its text option is checked like any other."""
    resolved = resolved_options("fcfsbIpm", {"layers": "time-limits", "tl_policy": "hybrid"})
    assert resolved["layers"] == ["time-limits"] and resolved["tl_policy"] == "hybrid"
    assert resolved_options("snficon", {"layers": ["time-limits"]})["tl_poll_s"] == 20.0
    with pytest.raises(InputError, match="'tl_policy': 'cancel' is not one of baseline, "
                                         "early-cancel, extend, hybrid"):
        compose("snf", "ipm", ("time-limits",), {"tl_policy": "cancel"})
    with pytest.raises(InputError, match="unknown option 'tl_policy' for snf\\+ipm"):
        compose("snf", "ipm", (), {"tl_policy": "hybrid"})
