"""The power model from SIMULATION_BEGINS' resources: host properties of generated platforms."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest

from snficon.engine.protocol import begins_data
from snficon.errors import InputError
from snficon.platform.generate import (
    AOBA,
    TAURUS,
    render_heterogeneous_platform,
    render_platform,
    write_platform,
)
from snficon.platform.reader import read_platform
from snficon.platform.resources import POWER_PROPERTIES, power_model_from_resources

from .conftest import REPO

FIELDS = ("p_idle_w", "p_busy_w", "p_sleep_w", "t_off_s", "p_off_w", "t_on_s", "p_on_w",
          "can_sleep")


def _resources(path: Path) -> list[dict]:
    """The compute resources the engine sends in SIMULATION_BEGINS for this platform."""
    return begins_data(read_platform(path), [], [])["compute_resources"]


def _same(a, b) -> None:
    for name in FIELDS:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


@pytest.mark.parametrize("name", ["aoba-64", "taurus-64", "aoba-1152"])
def test_committed_platforms_give_the_model_of_their_pstates(name: str):
    """An independent source: the model read from the pstates and wattages of the XML."""
    path = REPO / "platforms" / f"{name}.xml"
    model = power_model_from_resources(_resources(path))
    assert model is not None
    _same(model, read_platform(path).power_model())


def test_heterogeneous_platform_per_node(tmp_path: Path):
    path = write_platform(tmp_path / "h.xml",
                          render_heterogeneous_platform([(3, AOBA), (2, TAURUS)]))
    model = power_model_from_resources(_resources(path))
    assert model is not None
    assert model.t_on_s.tolist() == [1200.0] * 3 + [182.0] * 2
    assert model.p_busy_w.tolist() == [2100.0] * 3 + [167.0] * 2
    _same(model, read_platform(path).power_model())


def test_resources_in_any_order(tmp_path: Path):
    path = write_platform(tmp_path / "h.xml",
                          render_heterogeneous_platform([(1, AOBA), (1, TAURUS)]))
    resources = _resources(path)[::-1]
    model = power_model_from_resources(resources)
    assert model is not None and model.p_idle_w.tolist() == [600.0, 91.0]


def test_none_without_the_properties(shared_dir: Path):
    """Platforms written elsewhere (the Batsim recordings) carry no power property."""
    resources = _resources(shared_dir / "conformance" / "cases" / "aoba16.xml")
    assert power_model_from_resources(resources) is None


@pytest.mark.parametrize(("prop", "value", "text"), [
    ("switch_on_s", None, "'switch_on_s' is missing"),
    ("switch_on_s", "0", "duration > 0 s"),
    ("power_idle_w", "-1", "power >= 0 W"),
    ("power_busy_w", "lots", "not a number"),
    ("switch_off_s", "inf", "duration > 0 s"),
])
def test_bad_properties_are_refused(tmp_path: Path, prop: str, value: str | None, text: str):
    path = write_platform(tmp_path / "p.xml", render_platform(AOBA, 3))
    resources = copy.deepcopy(_resources(path))
    if value is None:
        del resources[1]["properties"][prop]
    else:
        resources[1]["properties"][prop] = value
    with pytest.raises(InputError, match=text) as caught:
        power_model_from_resources(resources)
    assert "resource 1 (node1)" in str(caught.value)


def test_property_names():
    assert list(POWER_PROPERTIES) == ["power_idle_w", "power_busy_w", "power_sleep_w",
                                      "switch_off_s", "switch_off_w", "switch_on_s",
                                      "switch_on_w"]
