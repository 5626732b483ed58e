"""The adapter reads the nodes' power model from SIMULATION_BEGINS' host properties
when no ``platform`` option is given (issue 10: ``pybatsim snficon -t 0`` alone)."""

from __future__ import annotations

from pathlib import Path

import pytest

from snficon.campaign.runs import truncate_workload
from snficon.drivers.session import simulate_in_process, simulate_with_pybatsim
from snficon.errors import InputError
from snficon.platform.resources import POWER_PROPERTIES

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def small_workload(tmp_path: Path) -> Path:
    """The first 150 jobs of the project's default Markovian workload."""
    return truncate_workload(REPO / "workloads" / "markovian-3000.json", 150, tmp_path / "w.json")


def _jobs(prefix: Path) -> list[str]:
    return (prefix.parent / f"{prefix.name}_jobs.csv").read_text().splitlines()


@pytest.mark.parametrize("policy", ["snficon", "fcfsbIpm"])
def test_host_properties_decide_as_the_platform_file(tmp_path, small_workload, policy):
    """Without ``platform`` the adapter reads SIMULATION_BEGINS' host properties: every
    job starts where and when it does with the option."""
    platform = REPO / "platforms" / "aoba-64.xml"
    runs = {}
    for name, options in {"file": {"platform": str(platform)}, "props": {}}.items():
        prefix = tmp_path / name / "out"
        prefix.parent.mkdir()
        simulate_in_process(platform, [small_workload], policy, options, export_prefix=prefix)
        runs[name] = _jobs(prefix)
    assert len(runs["file"]) == 151
    assert runs["props"] == runs["file"]


def test_pybatsim_alone_over_zeromq(tmp_path, small_workload):
    """``pybatsim snfIpm`` with no options at all, in its own process over ZeroMQ."""
    platform = REPO / "platforms" / "aoba-64.xml"
    prefix = tmp_path / "zmq" / "out"
    prefix.parent.mkdir()
    simulate_with_pybatsim(platform, [small_workload], "snfIpm", {}, export_prefix=prefix,
                           log_dir=tmp_path / "log")
    reference = tmp_path / "ref" / "out"
    reference.parent.mkdir()
    simulate_in_process(platform, [small_workload], "snfIpm", {"platform": str(platform)},
                        export_prefix=reference)
    assert _jobs(prefix) == _jobs(reference)


def test_no_properties_and_no_option_names_the_option(tmp_path, small_workload):
    """A platform written elsewhere (no power properties) and no ``platform`` option: the
    error at SIMULATION_BEGINS names the option to add."""
    text = (REPO / "platforms" / "aoba-64.xml").read_text()
    stripped = "\n".join(line for line in text.splitlines()
                         if not any(f'id="{prop}"' in line for prop in POWER_PROPERTIES))
    assert stripped != text
    platform = tmp_path / "elsewhere.xml"
    platform.write_text(stripped)
    prefix = tmp_path / "x" / "out"
    prefix.parent.mkdir()
    with pytest.raises(InputError, match=r"pass -o '\{\"platform\": \"FILE.xml\"\}'"):
        simulate_in_process(platform, [small_workload], "snfIpm", {}, export_prefix=prefix)
