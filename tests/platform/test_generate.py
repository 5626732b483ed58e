"""Platform generation: SPEC section 3 models, the aoba16.xml layout, committed files, CLI."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from snficon.errors import InputError
from snficon.platform.generate import (
    AOBA,
    NODE_MODELS,
    TAURUS,
    NodeModel,
    format_number,
    render_heterogeneous_platform,
    render_platform,
    transition_speed,
    write_platform,
)
from snficon.platform.reader import read_platform
from snficon.platform.resources import POWER_PROPERTIES
from snficon.platform.summary import format_ids, summarize

from .conftest import REPO

# SPEC section 3: busy, idle, sleep W; switch-off s, W; switch-on s, W.
SPEC3 = {
    "aoba": (2100, 600, 60, 600, 600, 1200, 600),
    "taurus": (167, 91, 8, 15, 110, 182, 130),
}
COMMITTED = [("aoba", 64), ("aoba", 1152), ("taurus", 64), ("taurus", 1152)]


def figures(model: NodeModel) -> tuple[float, ...]:
    return (model.busy_w, model.idle_w, model.sleep_w, model.off_s, model.off_w,
            model.on_s, model.on_w)


def power_figures(path: Path) -> set[tuple[float, ...]]:
    """The distinct per-node figures of a platform file, SPEC 3 column order."""
    power = read_platform(path).power_model()
    columns = (power.p_busy_w, power.p_idle_w, power.p_sleep_w, power.t_off_s, power.p_off_w,
               power.t_on_s, power.p_on_w)
    return {tuple(float(c[i]) for c in columns) for i in range(len(power.p_idle_w))}


def layout(element: ET.Element) -> list:
    """Tags, attribute names and property ids of an XML tree, hosts collapsed to one."""
    children = []
    for child in element:
        entry = (child.tag, sorted(child.attrib),
                 child.attrib.get("id") if child.tag == "prop" else None, layout(child))
        if not children or entry != children[-1]:
            children.append(entry)
    return children


def test_registry_holds_spec3() -> None:
    assert set(NODE_MODELS) == {"aoba", "taurus"}
    for name, model in NODE_MODELS.items():
        assert model.name == name
        assert figures(model) == SPEC3[name]
    assert AOBA.off_j == 360_000 and AOBA.on_j == 720_000
    assert TAURUS.off_j == 1650 and TAURUS.on_j == 23_660
    with pytest.raises(TypeError):
        NODE_MODELS["x"] = AOBA  # type: ignore[index]


def _without_power_properties(text: str) -> str:
    return "".join(line for line in text.splitlines(keepends=True)
                   if not any(f'"{prop}"' in line for prop in POWER_PROPERTIES))


def test_aoba16_is_reproduced_byte_for_byte(cases: Path) -> None:
    """Batsim's aoba16.xml plus the power properties, and nothing else."""
    reference = (cases / "aoba16.xml").read_text()
    generated = render_platform(AOBA, 16)
    assert _without_power_properties(generated) == reference
    assert generated.count('<prop id="switch_on_s" value="1200"/>') == 16


def test_aoba16_layout(cases: Path) -> None:
    reference = ET.parse(cases / "aoba16.xml").getroot()
    generated = ET.fromstring(_without_power_properties(render_platform(AOBA, 16)))
    assert layout(generated) == layout(reference)
    assert generated.attrib == reference.attrib
    for mine, theirs in zip(generated.iter(), reference.iter(), strict=True):
        assert (mine.tag, mine.attrib) == (theirs.tag, theirs.attrib)


@pytest.mark.parametrize(("name", "nodes"), COMMITTED)
def test_committed_platform(name: str, nodes: int, tmp_path: Path,
                            run_cli: Callable[..., int]) -> None:
    committed = REPO / "platforms" / f"{name}-{nodes}.xml"
    platform = read_platform(committed)
    assert platform.nb_nodes == nodes
    assert power_figures(committed) == {tuple(float(v) for v in SPEC3[name])}
    fresh = tmp_path / committed.name
    assert run_cli("generate", name, "--nodes", str(nodes), "-o", str(fresh)) == 0
    assert fresh.read_bytes() == committed.read_bytes()


def test_one_wattage_entry_per_pstate() -> None:
    root = ET.fromstring(render_heterogeneous_platform([(2, AOBA), (2, TAURUS)]))
    hosts = root.findall("./zone/host")
    assert len(hosts) == 5
    for host in hosts:
        props = {p.attrib["id"]: p.attrib["value"] for p in host.findall("prop")}
        assert len(props["wattage_per_state"].split(",")) == len(host.attrib["speed"].split(","))


def test_transition_speeds_read_back_exactly() -> None:
    assert transition_speed(600) == "0.0016666666666666668f"
    for seconds in (600, 1200, 15, 182, 8, 32, 0.5):
        assert 1.0 / float(transition_speed(seconds)[:-1]) == seconds
    assert 1.0 / float(transition_speed(7.3)[:-1]) == pytest.approx(7.3, rel=1e-15)
    assert format_number(600.0) == "600" and format_number(91.5) == "91.5"


def test_custom_values_round_trip(tmp_path: Path) -> None:
    model = NodeModel("odd", busy_w=250.5, idle_w=99.25, sleep_w=0, off_s=7.3, off_w=120.1,
                      on_s=33.3, on_w=140)
    path = write_platform(tmp_path / "odd.xml", render_platform(model, 3))
    (read_back,) = power_figures(path)
    assert read_back == pytest.approx(figures(model), rel=1e-15)
    (group,) = summarize(read_platform(path))
    assert group.name == "custom" and group.count == 3


def test_heterogeneous(tmp_path: Path) -> None:
    fat = replace(AOBA, name="fat", busy_w=3000)
    groups = [(3, AOBA), (2, TAURUS), (11, fat)]
    path = write_platform(tmp_path / "het.xml", render_heterogeneous_platform(groups))
    platform = read_platform(path)
    assert platform.nb_nodes == 16
    # Names are padded so that Batsim's name order (resource ids) is the group order.
    assert [h.name for h in platform.hosts] == [f"node{i:02d}" for i in range(16)]
    power = platform.power_model()
    expected_busy = [2100] * 3 + [167] * 2 + [3000] * 11
    np.testing.assert_array_equal(power.p_busy_w, expected_busy)
    np.testing.assert_array_equal(power.t_on_s, [1200] * 3 + [182] * 2 + [1200] * 11)
    summary = summarize(platform)
    assert [(g.name, g.count, format_ids(g.ids)) for g in summary] == [
        ("aoba", 3, "0-2"), ("taurus", 2, "3-4"), ("custom", 11, "5-15")]


def test_heterogeneous_single_group_has_same_values(tmp_path: Path) -> None:
    path = write_platform(tmp_path / "one.xml", render_heterogeneous_platform([(4, TAURUS)]))
    assert power_figures(path) == {tuple(float(v) for v in SPEC3["taurus"])}


@pytest.mark.parametrize("groups", [[], [(0, AOBA)], [(-1, AOBA)], [(2.0, AOBA)],
                                    [(2, "aoba")]])
def test_bad_groups(groups: list) -> None:
    with pytest.raises(InputError):
        render_heterogeneous_platform(groups)


@pytest.mark.parametrize("change", [{"off_s": 0}, {"on_s": -1}, {"idle_w": -5},
                                    {"busy_w": float("nan")}, {"on_s": float("inf")},
                                    {"sleep_w": "60"}])
def test_node_model_validation(change: dict) -> None:
    with pytest.raises(InputError, match=next(iter(change))):
        replace(AOBA, **change)


def test_format_ids() -> None:
    assert format_ids([5, 0, 1, 2, 7, 8]) == "0-2,5,7-8"
    assert format_ids([3]) == "3"


# --- command line -------------------------------------------------------------------------

def test_cli_overrides_and_custom(tmp_path: Path, run_cli: Callable[..., int]) -> None:
    out = tmp_path / "o.xml"
    assert run_cli("generate", "taurus", "-n", "4", "--idle-w", "80", "-o", str(out)) == 0
    assert power_figures(out) == {(167.0, 80.0, 8.0, 15.0, 110.0, 182.0, 130.0)}
    values = ["--busy-w", "10", "--idle-w", "5", "--sleep-w", "1", "--off-s", "2",
              "--off-w", "3", "--on-s", "4", "--on-w", "6"]
    assert run_cli("generate", "custom", "--nodes", "2", *values, "-o", str(out)) == 0
    assert power_figures(out) == {(10.0, 5.0, 1.0, 2.0, 3.0, 4.0, 6.0)}
    with pytest.raises(InputError, match="on_w"):
        run_cli("generate", "custom", "--nodes", "2", *values[:-2], "-o", str(out))


def test_cli_groups(tmp_path: Path, run_cli: Callable[..., int]) -> None:
    out = tmp_path / "g.xml"
    assert run_cli("generate", "-g", "2:aoba", "--group", "3:taurus,idle_w=80", "-o",
                   str(out)) == 0
    np.testing.assert_array_equal(read_platform(out).power_model().p_idle_w, [600] * 2 + [80] * 3)
    for bad in ["2aoba", "x:aoba", "2:nope", "2:aoba,foo=1", "2:aoba,idle_w=x", "0:aoba",
                "2:custom,idle_w=1"]:
        with pytest.raises(InputError):
            run_cli("generate", "-g", bad, "-o", str(out))
    with pytest.raises(InputError, match="--group"):
        run_cli("generate", "aoba", "-g", "2:aoba", "-o", str(out))


def test_cli_needs_model_and_nodes(tmp_path: Path, run_cli: Callable[..., int]) -> None:
    out = str(tmp_path / "x.xml")
    with pytest.raises(InputError, match="MODEL"):
        run_cli("generate", "-n", "3", "-o", out)
    with pytest.raises(InputError, match="--nodes"):
        run_cli("generate", "aoba", "-o", out)
    with pytest.raises(InputError, match=">= 1"):
        run_cli("generate", "aoba", "-n", "0", "-o", out)
    assert not (tmp_path / "x.xml").exists()


def test_cli_show(tmp_path: Path, run_cli: Callable[..., int],
                  capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "s.xml"
    run_cli("generate", "-g", "3:aoba", "-g", "1:taurus", "-o", str(out))
    capsys.readouterr()
    assert run_cli("show", str(out)) == 0
    text = capsys.readouterr().out
    assert "4 compute nodes" in text and "2 distinct models" in text
    assert "3 x aoba (ids 0-2)" in text and "1 x taurus (ids 3)" in text
    assert "switch-on 1200 s at 600 W" in text
    with pytest.raises(InputError, match="not found"):
        run_cli("show", str(tmp_path / "none.xml"))
