"""A platform without a master host is refused as Batsim 4.2.1 refuses it; hosts without
energy profiles are counted at 0 W with a warning, as SimGrid's energy plugin gives."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from snficon.drivers.session import build_engine
from snficon.errors import InputError
from snficon.platform.reader import read_platform, warn_hosts_without_energy

OPEN = ("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
        '<platform version="4.1">\n<zone id="AS0" routing="Full">\n')
CLOSE = "</zone>\n</platform>\n"
ENERGY = ('<prop id="wattage_per_state" value="100:200, 10:10, 50:50, 150:150"/>'
          '<prop id="sleep_pstates" value="1:2:3"/>')
SPEED = "1Gf, 1e-9Mf, 0.125f, 0.03125f"


def host(name: str, props: str = ENERGY) -> str:
    return f'  <host id="{name}" speed="{SPEED}" pstate="0">{props}</host>\n'


def write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "platform.xml"
    path.write_text(OPEN + body + CLOSE)
    return path


def test_no_master_host_is_refused_naming_the_file(tmp_path: Path):
    path = write(tmp_path, host("node0") + host("node1"))
    with pytest.raises(InputError) as caught:
        read_platform(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: Cannot find the \"master\" role in the platform file")
    assert "master_host" in message


def test_a_host_with_the_master_role_is_the_master(tmp_path: Path):
    body = ('  <host id="head" speed="100Mf"><prop id="role" value="master"/></host>\n'
            + host("node0") + host("node1"))
    platform = read_platform(write(tmp_path, body))
    assert [h.name for h in platform.hosts] == ["node0", "node1"]  # head runs no job


def test_master_host_by_name(tmp_path: Path):
    body = '  <host id="master_host" speed="100Mf"/>\n' + host("node0")
    assert read_platform(write(tmp_path, body)).nb_nodes == 1


def test_hosts_without_energy_are_named_in_one_warning(tmp_path: Path, caplog):
    body = ('  <host id="master_host" speed="100Mf"/>\n' + host("node0")
            + host("node1", props="") + host("node2", props=""))
    platform = read_platform(write(tmp_path, body))
    with caplog.at_level(logging.WARNING, logger="snficon.platform.reader"):
        assert warn_hosts_without_energy(platform) == ["node1", "node2"]
    [record] = caplog.records
    assert "no energy profile (wattage_per_state) for 2 host(s): node1, node2" in record.message
    assert "0 W" in record.message and str(platform.source) in record.message


def test_the_warning_comes_with_energy_only(tmp_path: Path, caplog):
    body = '  <host id="master_host" speed="100Mf"/>\n' + host("node0", props="")
    path = write(tmp_path, body)
    workload = tmp_path / "w.json"
    workload.write_text('{"nb_res": 1, "jobs": [], "profiles": {}}')
    with caplog.at_level(logging.WARNING):
        build_engine(path, [workload], energy=False)
    assert not caplog.records
    with caplog.at_level(logging.WARNING):
        build_engine(path, [workload], energy=True)
    assert [r.name for r in caplog.records] == ["snficon.platform.reader"]


def test_every_host_with_energy_gives_no_warning(tmp_path: Path, caplog):
    body = '  <host id="master_host" speed="100Mf"/>\n' + host("node0")
    with caplog.at_level(logging.WARNING):
        assert warn_hosts_without_energy(read_platform(write(tmp_path, body))) == []
    assert not caplog.records
