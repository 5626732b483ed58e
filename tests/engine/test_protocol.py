"""The payload of SIMULATION_BEGINS (``protocol``): resources, workloads and profiles."""

from __future__ import annotations

from pathlib import Path

from snficon.engine.protocol import BATSIM_CONFIG, begins_data
from snficon.platform.reader import read_platform
from snficon.workload.reader import read_workload

from .conftest import write_workload


def test_begins_data_of_a_four_node_platform_and_two_workloads(platform4: Path, tmp_path: Path):
    """4 hosts -> 4 compute resources, ids 0..3, idle, Batsim's empty ``role`` first in
    their properties; workloads named w0, w1 with their labels; each workload's profiles
    under its name, in the file's order."""
    first = write_workload(tmp_path / "a.json", [{"id": 1, "subtime": 0, "res": 1}])
    second = write_workload(tmp_path / "b.json", [{"id": 1, "subtime": 0, "res": 2,
                                                   "profile": "d5"}],
                            {"d5": {"type": "delay", "delay": 5.0},
                             "d1": {"type": "delay", "delay": 1.0}})
    workloads = [read_workload(first), read_workload(second)]
    data = begins_data(read_platform(platform4), workloads, ["a", "b"])
    resources = data["compute_resources"]
    assert (data["nb_resources"], data["nb_compute_resources"], data["nb_storage_resources"]) \
        == (4, 4, 0)
    assert [r["id"] for r in resources] == [0, 1, 2, 3]
    assert {r["state"] for r in resources} == {"idle"}
    assert all(next(iter(r["properties"].items())) == ("role", "") for r in resources)
    assert data["storage_resources"] == [] and data["allow_compute_sharing"] is False
    assert data["workloads"] == {"w0": "a", "w1": "b"}
    assert data["profiles"] == {"w0": {"d10": {"type": "delay", "delay": 10.0}},
                                "w1": {"d5": {"type": "delay", "delay": 5.0},
                                       "d1": {"type": "delay", "delay": 1.0}}}
    assert list(data["profiles"]["w1"]) == ["d5", "d1"]


def test_the_config_is_batsim_default_and_a_copy(platform4: Path):
    data = begins_data(read_platform(platform4), [], [])
    assert data["config"] == BATSIM_CONFIG and data["config"] is not BATSIM_CONFIG
    assert data["config"]["profiles-forwarded-on-submission"] is False
    assert (data["workloads"], data["profiles"]) == ({}, {})
