"""read_platform: the conformance files, Batsim's resource order, clusters, errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from snficon.errors import InputError
from snficon.platform.reader import parse_speed, read_platform

HEADER = ("<?xml version='1.0'?>\n"
          '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
          '<platform version="4.1">\n<zone id="AS0" routing="Full">\n'
          '  <host id="master_host" speed="100Mf"/>\n')
FOOTER = "</zone>\n</platform>\n"
GOOD_SPEED = "1Gf, 1e-9Mf, 0.125f, 0.03125f"
GOOD_WATTS = "100:200, 10:10, 50:50, 150:150"


def host(name: str, speed: str = GOOD_SPEED, watts: str | None = GOOD_WATTS,
         sleep: str | None = "1:2:3", extra: str = "") -> str:
    props = ""
    if watts is not None:
        props += f'    <prop id="wattage_per_state" value="{watts}"/>\n'
    if sleep is not None:
        props += f'    <prop id="sleep_pstates" value="{sleep}"/>\n'
    return f'  <host id="{name}" speed="{speed}" pstate="0" {extra}>\n{props}  </host>\n'


def write(tmp_path: Path, body: str, name: str = "p.xml") -> Path:
    path = tmp_path / name
    path.write_text(HEADER + body + FOOTER)
    return path


# --- the conformance platforms (real Batsim 4.2 loads them) -------------------------------

def test_energy4(cases: Path) -> None:
    platform = read_platform(cases / "energy4.xml")
    assert platform.nb_nodes == 4
    assert [h.name for h in platform.hosts] == ["node0", "node1", "node2", "node3"]
    assert [h.id for h in platform.hosts] == [0, 1, 2, 3]
    power = platform.power_model()
    # 3-value entries "100:100:200": idle is the first value, busy the last (all cores).
    np.testing.assert_array_equal(power.p_idle_w, 100)
    np.testing.assert_array_equal(power.p_busy_w, 200)
    np.testing.assert_array_equal(power.p_sleep_w, 10)
    np.testing.assert_array_equal(power.t_off_s, 8)
    np.testing.assert_array_equal(power.p_off_w, 50)
    np.testing.assert_array_equal(power.t_on_s, 32)
    np.testing.assert_array_equal(power.p_on_w, 150)
    np.testing.assert_array_equal(power.e_off_j, 400)
    np.testing.assert_array_equal(power.e_on_j, 4800)
    assert power.can_sleep.all()
    first = platform.hosts[0]
    assert first.sleep_states[0].sleep == 1
    assert (first.sleep_states[0].switch_off, first.sleep_states[0].switch_on) == (2, 3)
    assert first.virtual_pstates == {2, 3} and first.sleep_pstates == {1}
    assert first.properties["wattage_off"] == "10"


def test_aoba16(cases: Path) -> None:
    platform = read_platform(cases / "aoba16.xml")
    assert platform.nb_nodes == 16
    assert "master_host" not in {h.name for h in platform.hosts}
    power = platform.power_model()
    np.testing.assert_array_equal(power.p_idle_w, 600)
    np.testing.assert_array_equal(power.p_busy_w, 2100)
    np.testing.assert_array_equal(power.p_sleep_w, 60)
    np.testing.assert_array_equal(power.t_off_s, 600)
    np.testing.assert_array_equal(power.t_on_s, 1200)
    np.testing.assert_array_equal(power.p_off_w, 600)
    np.testing.assert_array_equal(power.p_on_w, 600)
    np.testing.assert_array_equal(power.e_off_j, 360_000)
    np.testing.assert_array_equal(power.e_on_j, 720_000)


def test_resource_ids_follow_batsim_name_order(cases: Path) -> None:
    """Batsim numbers hosts sorted by name (SimGrid's host map), not in file order."""
    platform = read_platform(cases / "aoba16.xml")
    names = [h.name for h in platform.hosts]
    assert names[:4] == ["node0", "node1", "node10", "node11"]
    assert names == sorted(f"node{i}" for i in range(16))
    assert [h.id for h in platform.hosts] == list(range(16))
    transcript = cases / "aoba16-delay" / "transcript.jsonl"
    if not transcript.is_file():
        pytest.skip("aoba16-delay transcript not found")
    with transcript.open() as stream:
        first = json.loads(stream.readline())
    begins = first["msg"]["events"][0]
    assert begins["type"] == "SIMULATION_BEGINS"
    recorded = {r["id"]: r["name"] for r in begins["data"]["compute_resources"]}
    assert recorded == {h.id: h.name for h in platform.hosts}


def test_file_order_does_not_give_ids(tmp_path: Path) -> None:
    path = write(tmp_path, host("b2") + host("b10") + host("a"))
    assert [(h.id, h.name) for h in read_platform(path).hosts] == [(0, "a"), (1, "b10"), (2, "b2")]


# --- layouts ---------------------------------------------------------------------------

def test_cluster_expansion(tmp_path: Path) -> None:
    body = ('  <cluster id="c" prefix="c-" suffix=".x" radical="0-2,5" speed="' + GOOD_SPEED
            + '" bw="1Gbps" lat="1us">\n'
            f'    <prop id="wattage_per_state" value="{GOOD_WATTS}"/>\n'
            '    <prop id="sleep_pstates" value="1:2:3"/>\n  </cluster>\n')
    platform = read_platform(write(tmp_path, body))
    assert [h.name for h in platform.hosts] == ["c-0.x", "c-1.x", "c-2.x", "c-5.x"]
    np.testing.assert_array_equal(platform.power_model().t_on_s, 32)
    assert all(h.properties["sleep_pstates"] == "1:2:3" for h in platform.hosts)


def test_nested_zones_and_master_role(tmp_path: Path) -> None:
    body = ('  <zone id="inner" routing="Full">\n' + host("n0") + host("n1")
            + '    <host id="boss" speed="1Gf"><prop id="role" value="master"/></host>\n'
            + "  </zone>\n")
    platform = read_platform(write(tmp_path, body))
    assert [h.name for h in platform.hosts] == ["n0", "n1"]


@pytest.mark.parametrize("entry", ["100:200", "100:150:200"])
def test_two_and_three_value_wattages(tmp_path: Path, entry: str) -> None:
    watts = f"{entry}, 10:10, 50:50, 150:150"
    power = read_platform(write(tmp_path, host("n0", watts=watts))).power_model()
    assert (power.p_idle_w[0], power.p_busy_w[0]) == (100, 200)


def test_more_wattage_entries_than_pstates_is_accepted(tmp_path: Path) -> None:
    # SimGrid ignores extra entries; only missing ones abort it.
    watts = GOOD_WATTS + ", 1:2"
    assert read_platform(write(tmp_path, host("n0", watts=watts))).nb_nodes == 1


def test_power_model_of_a_host_that_cannot_sleep(tmp_path: Path) -> None:
    path = write(tmp_path, host("n0") + host("n1", speed="1Gf", watts="90:180", sleep=None))
    power = read_platform(path).power_model()
    assert list(power.can_sleep) == [True, False]
    assert power.t_on_s[1] == np.inf and power.e_on_j[1] == np.inf
    assert power.p_sleep_w[1] == 90  # an unsleepable node "sleeps" idle
    assert power.e_off_j[0] == 8 * 50 and power.e_on_j[0] == 32 * 150


def test_sleep_pstate_may_have_speed_zero(tmp_path: Path) -> None:
    path = write(tmp_path, host("n0", speed="1Gf, 0f, 0.125f, 0.03125f"))
    assert read_platform(path).power_model().t_off_s[0] == 8


@pytest.mark.parametrize(("text", "flops"), [
    ("1Gf", 1e9), ("100Mf", 1e8), ("0.125f", 0.125), ("1e-9Mf", 1e-3), ("2megaflops", 2e6),
    ("1Ef", 1e18), ("3kf", 3e3), ("5", 5.0), (" 7f ", 7.0), ("0.0016666666666666668f", 1 / 600),
])
def test_parse_speed(text: str, flops: float) -> None:
    assert parse_speed(text) == pytest.approx(flops, rel=1e-15)


@pytest.mark.parametrize("text", ["fast", "1Gx", "1Gflops", "1Gif", "-1f", "1 Gf", "", "inf"])
def test_parse_speed_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        parse_speed(text)


# --- errors: InputError naming the file, and the host and property when there is one ---------

def assert_input_error(path: Path, *words: str) -> str:
    with pytest.raises(InputError) as caught:
        read_platform(path)
    message = str(caught.value)
    assert str(path) in message
    for word in words:
        assert word in message, (word, message)
    return message


def test_missing_file(tmp_path: Path) -> None:
    assert "not found" in assert_input_error(tmp_path / "nope.xml")


def test_directory_instead_of_file(tmp_path: Path) -> None:
    assert_input_error(tmp_path)


def test_malformed_xml(tmp_path: Path) -> None:
    path = tmp_path / "bad.xml"
    path.write_text(HEADER + '  <host id="n0" speed="1Gf">\n' + FOOTER)
    assert "malformed XML" in assert_input_error(path)


def test_no_compute_host(tmp_path: Path) -> None:
    assert "no compute host" in assert_input_error(write(tmp_path, ""))


def test_fewer_wattage_entries_than_pstates(tmp_path: Path) -> None:
    path = write(tmp_path, host("n0") + host("n1", watts="100:200, 10:10, 50:50"))
    message = assert_input_error(path, "'n1'", "wattage_per_state")
    assert "3 wattage entries for 4 pstates" in message


@pytest.mark.parametrize("watts", ["100:200, 10, 50:50, 150:150", "100:x, 10:10, 50:50, 1:1",
                                   "-1:200, 10:10, 50:50, 150:150",
                                   "nan:200, 10:10, 50:50, 150:150"])
def test_bad_wattage_entry(tmp_path: Path, watts: str) -> None:
    assert_input_error(write(tmp_path, host("n0", watts=watts)), "'n0'", "wattage_per_state")


@pytest.mark.parametrize(("sleep", "why"), [
    ("1:2:7", "pstate 7 does not exist"),
    ("1:2", "is not 'sleep:switch_off:switch_on'"),
    ("1:2:3:0", "is not 'sleep:switch_off:switch_on'"),
    ("1:x:3", "sleep_pstates"),
    ("1:1:3", "used twice"),
    ("0:2:3", "initial pstate 0"),
])
def test_bad_sleep_pstates(tmp_path: Path, sleep: str, why: str) -> None:
    assert_input_error(write(tmp_path, host("n0", sleep=sleep)), "'n0'", "sleep_pstates", why)


def test_sleep_pstates_without_wattages(tmp_path: Path) -> None:
    assert_input_error(write(tmp_path, host("n0", watts=None)), "'n0'", "wattage_per_state")


@pytest.mark.parametrize("speed", ["1Gf, 1e-9Mf, fast, 0.03125f", "1Gx, 1e-9Mf, 0.125f, 1f",
                                   "1Gf, 1e-9Mf, 0f, 0.03125f", "0f, 1e-9Mf, 0.125f, 0.03125f",
                                   "1Gf, 1e-9Mf, -0.125f, 0.03125f"])
def test_bad_speed(tmp_path: Path, speed: str) -> None:
    assert_input_error(write(tmp_path, host("n0", speed=speed)), "'n0'", "speed")


def test_missing_speed(tmp_path: Path) -> None:
    path = write(tmp_path, '  <host id="n0"/>\n')
    assert_input_error(path, "'n0'", "speed")


def test_host_defined_twice(tmp_path: Path) -> None:
    assert_input_error(write(tmp_path, host("n0") + host("n0")), "'n0'", "twice")


def test_bad_cluster_radical(tmp_path: Path) -> None:
    body = '  <cluster id="c" prefix="c" suffix="" radical="a-b" speed="1Gf"/>\n'
    assert_input_error(write(tmp_path, body), "'c'", "radical")


def test_wrong_root(tmp_path: Path) -> None:
    path = tmp_path / "w.xml"
    path.write_text("<zone/>")
    assert_input_error(path, "<platform>")
