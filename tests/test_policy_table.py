"""The one policy table: every consumer derives from it, and any composition runs.

``snficon.policy_table.POLICIES`` names the policies; the pybatsim entry
modules, robin's command lines, ``snficon run --policy`` and the campaign's
option checking all read it. A composition no row names (FCFS/EASY with the
warm-spare controller) runs from options alone, in-process and through a real
pybatsim process, with the same decisions.
"""

from __future__ import annotations

import importlib
import json
import shlex

import pytest

from snficon.adapter.scheduler import PolicyScheduler
from snficon.cli import main
from snficon.conformance import compare_outputs
from snficon.core.parts import KINDS
from snficon.part_registry import PARTS
from snficon.policy_table import POLICIES, policy_colour, policy_label, resolved_options
from snficon.robin.campaign import pybatsim_command
from tests.conftest import REPO_ROOT
from tests.engine.conftest import write_workload


@pytest.mark.parametrize("name", list(POLICIES))
def test_each_policy_has_its_pybatsim_module(name):
    """``pybatsim MODULE`` imports ``schedulers.MODULE`` and its capitalised class, which
    must run this row's composition (a variant through its presets, given as options)."""
    entry = POLICIES[name]
    module = importlib.import_module(f"schedulers.{entry.pybatsim}")
    cls = getattr(module, entry.pybatsim[0].upper() + entry.pybatsim[1:])
    assert issubclass(cls, PolicyScheduler)
    scheduler = cls(dict(entry.preset))
    assert scheduler.composition == entry.composition()
    assert (REPO_ROOT / "schedulers" / f"{entry.pybatsim}.py").is_file()


def test_every_schedulers_module_is_a_row_of_the_table():
    modules = {path.stem for path in (REPO_ROOT / "schedulers").glob("*.py")} - {"__init__"}
    assert modules == {entry.pybatsim for entry in POLICIES.values()}


def test_parts_table_kinds_and_labels():
    assert {spec.kind for spec in PARTS.values()} <= set(KINDS)
    assert all(spec.label and spec.summary for spec in PARTS.values())


def test_labels_colours_and_robin_names_come_from_the_table():
    assert policy_label("snficon-ng") == "SNF-ICON-NG"
    assert policy_label("snficon", {"order": "fcfs-easy"}) == "FCFS/B+ICON"
    assert policy_label("snficon", {"order": "snf"}) == "SNF-ICON"
    assert len({policy_colour(name) for name in POLICIES}) == len(POLICIES)
    command = pybatsim_command("snficon-nf", resolved_options("snficon-nf"))
    assert command.startswith("pybatsim snficon -t 0 -o ")
    sent = shlex.split(command)
    assert json.loads(sent[sent.index("-o") + 1])["fallback"] is False


def test_fcfs_easy_with_the_warm_spare_controller_runs_the_same_on_both_paths(
        platform4, tmp_path, capsys):
    """``--policy snficon --order fcfs-easy``: no row names it, yet it runs in-process and
    through ``pybatsim snficon -o '{"order": "fcfs-easy", ...}'`` with identical outputs,
    and its decisions differ from SNF-ICON's (the order matters on this queue)."""
    jobs = [{"id": i, "subtime": 30.0 * i, "res": 1 + (7 * i) % 4} for i in range(1, 41)]
    workload = write_workload(tmp_path / "w.json", jobs)
    outputs = {}
    for label, extra in (("inprocess", []), ("zmq", ["--engine", "zmq"]),
                         ("snf", None)):
        order = [] if extra is None else ["--order", "fcfs-easy"]
        code = main(["run", "--platform", str(platform4), "--workload", str(workload),
                     "--policy", "snficon", *order, "--set", "timeout=60",
                     "--set", "n_min=2", *(extra or []), "-o", str(tmp_path / label)])
        assert code == 0
        outputs[label] = tmp_path / label / "out"
    assert "FCFS/B+ICON on" in capsys.readouterr().out
    assert compare_outputs(outputs["inprocess"], outputs["zmq"]) == []
    assert (outputs["snf"].with_name("out_jobs.csv").read_text()
            != outputs["inprocess"].with_name("out_jobs.csv").read_text())


def test_layers_option_of_an_unknown_part_is_refused(platform4, tmp_path, capsys):
    workload = write_workload(tmp_path / "w.json", [{"id": 1, "subtime": 0, "res": 1}])
    code = main(["run", "--platform", str(platform4), "--workload", str(workload),
                 "--policy", "snfIpm", "--power", "icon", "--set", "layers=nolayer",
                 "-o", str(tmp_path / "x")])
    assert code == 2
    assert "unknown layer 'nolayer'" in capsys.readouterr().err
