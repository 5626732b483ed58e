"""A user's own parts (``examples/parts/``), copied outside the repository and run as a user
would: in-process, over ZeroMQ under pybatsim, in a two-worker campaign, through a robin file."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from snficon import cli
from snficon.campaign.config import read_campaign
from snficon.campaign.expand import expand, make_specs
from snficon.campaign.runner import run_campaign
from snficon.campaign.runs import PARAMS, stale_of
from snficon.commands import robin as robin_command
from snficon.conformance import compare_outputs
from snficon.errors import InputError
from snficon.part_registry import compose, part_identity
from snficon.platform.generate import NodeModel, render_platform, write_platform
from snficon.policy_table import policy_label

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "parts"
MODEL = NodeModel("test", busy_w=200, idle_w=100, sleep_w=10, off_s=8, off_w=50, on_s=32,
                  on_w=150)
LABEL = "LargestFirst+WarmTimeout"


@pytest.fixture
def user(tmp_path: Path) -> dict[str, Path]:
    """The example parts in ``tmp_path/my_parts`` and a 4-node platform and workload."""
    parts = tmp_path / "my_parts"
    shutil.copytree(EXAMPLES, parts)
    platform = write_platform(tmp_path / "p4.xml", render_platform(MODEL, 4))
    jobs = [{"id": i, "subtime": 40.0 * i, "res": 1 + i % 3, "profile": "d10", "walltime": 30}
            for i in range(1, 21)]
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({"nb_res": 4, "jobs": jobs, "profiles": {
        "d10": {"type": "delay", "delay": 10.0}}}))
    return {"parts": parts, "platform": platform, "workload": workload}


def specs(parts: Path) -> tuple[str, str]:
    return f"{parts / 'largest_first.py'}:LargestFirst", f"{parts / 'warm_timeout.py'}:WarmTimeout"


def test_example_parts_run_in_process_and_over_zmq_alike(user, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(user["parts"])  # relative file specs, as a user in their folder
    outputs = {}
    for engine in ("inprocess", "zmq"):
        folder = tmp_path / engine
        code = cli.main(["run", "--platform", str(user["platform"]), "--workload",
                         str(user["workload"]), "--policy", "snfIpm",
                         "--order", "largest_first.py:LargestFirst",
                         "--power", "warm_timeout.py:WarmTimeout", "--set", "k=1",
                         "--set", "timeout=60", "--engine", engine, "-o", str(folder)])
        assert code == 0, capsys.readouterr().err
        assert json.loads((folder / "metrics.json").read_text())["jobs"] == 20
        outputs[engine] = folder / "out"
        assert capsys.readouterr().out.startswith(f"{LABEL} on p4.xml")
    assert compare_outputs(outputs["inprocess"], outputs["zmq"]) == []
    changes = list(csv.DictReader(open(tmp_path / "inprocess" / "out_pstate_changes.csv")))
    assert any(row["new_pstate"] == "-2" for row in changes)  # WarmTimeout switched off


def test_compose_names_the_fault_of_a_part(user):
    order, power = specs(user["parts"])
    assert compose(order, power, (), {"k": 3}).label == LABEL
    with pytest.raises(InputError, match=r"unknown power 'warm' \(known: ipm, icon.*"
                                         r"package\.module:Class or path/to/file\.py:Class"):
        compose("snf", "warm")
    with pytest.raises(InputError, match="is a power manager, not a dispatch order"):
        compose(power, "ipm")
    with pytest.raises(InputError, match="option 'k': -1 is out of range"):
        compose("snf", power, (), {"k": -1})
    with pytest.raises(InputError, match="has no class Warm$"):
        compose("snf", power.replace("WarmTimeout", "Warm"))
    broken = user["parts"] / "broken.py"
    broken.write_text("class Broken:\n    def decide(self\n")
    with pytest.raises(InputError, match=r"broken\.py, line 2: syntax error"):
        compose("snf", f"{broken}:Broken")
    with pytest.raises(InputError, match="module no_such_module failed to import"):
        compose("snf", "no_such_module:Cls")


CAMPAIGN = """\
name = "user-parts"

[platforms]
p4 = "{platform}"

[workloads]
w = "{workload}"

[[group]]
name = "mine"
platforms = ["p4"]
workloads = ["w"]
policies = ["snfIpm"]
options = {{ order = "{order}", power = "{power}", timeout = 60 }}
sweep = {{ k = [0, 2] }}
"""


def write_user_campaign(user: dict[str, Path], tmp_path: Path) -> Path:
    order, power = specs(user["parts"])
    path = tmp_path / "mine.toml"
    path.write_text(CAMPAIGN.format(platform=user["platform"].as_posix(),
                                    workload=user["workload"].as_posix(), order=order,
                                    power=power))
    return path


def test_two_worker_campaign_runs_them_and_a_changed_part_makes_them_stale(user, tmp_path):
    campaign = write_user_campaign(user, tmp_path)
    results = tmp_path / "results"
    runs = make_specs(expand(read_campaign(campaign)).plans, results / "runs")
    outcome = run_campaign(runs, results, executor="local", workers=2)
    assert (outcome.total, outcome.done, outcome.failed) == (2, 2, 0)
    params = json.loads((results / "runs" / runs[0].run_id / PARAMS).read_text())
    power = specs(user["parts"])[1]
    assert set(params["parts"]) == set(specs(user["parts"]))
    assert len(params["parts"][power]["sha256"]) == 64
    provenance = json.loads((results / "runs" / runs[0].run_id / "provenance.json").read_text())
    assert f"part:{power}" in provenance["inputs"]
    assert policy_label("snfIpm", params["options"]) == LABEL
    with open(user["parts"] / "warm_timeout.py", "a") as stream:
        stream.write("# tuned\n")
    again = make_specs(expand(read_campaign(campaign)).plans, results / "runs")
    assert [spec.run_id for spec in again] != [spec.run_id for spec in runs]
    reason = stale_of(again[0], results / "runs" / runs[0].run_id)
    assert reason is not None and f"part:{power}" in reason


def test_robin_file_runs_them_under_pybatsim(user, tmp_path, monkeypatch, capsys):
    if robin_command not in cli.SUBCOMMANDS:
        monkeypatch.setattr(cli, "SUBCOMMANDS", cli.SUBCOMMANDS + (robin_command,))
    campaign = write_user_campaign(user, tmp_path)
    folder = tmp_path / "robin"
    assert cli.main(["campaign", str(campaign), "--robin", str(folder)]) == 0
    rows = list(csv.DictReader(open(folder / "index.csv")))
    assert len(rows) == 2
    path = folder / rows[0]["file"]
    monkeypatch.chdir(Path(__file__).resolve().parents[1])  # pybatsim finds schedulers/
    assert cli.main(["robin", str(path), "--engine", "embedded"]) == 0, capsys.readouterr()
    assert "succeeded" in capsys.readouterr().out
    jobs = list(csv.DictReader(open(folder / path.stem / "out_jobs.csv")))
    assert len(jobs) == 20


def test_an_installed_distribution_offers_its_parts_by_entry_point(user, tmp_path, monkeypatch):
    site = tmp_path / "site"
    (site / "mywarm").mkdir(parents=True)
    shutil.copy(user["parts"] / "warm_timeout.py", site / "mywarm" / "warm.py")
    (site / "mywarm" / "__init__.py").write_text("")
    info = site / "mywarm-0.3.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mywarm\nVersion: 0.3\n")
    (info / "entry_points.txt").write_text("[snficon.parts]\nwarm = mywarm.warm:WarmTimeout\n")
    (info / "top_level.txt").write_text("mywarm\n")
    monkeypatch.syspath_prepend(str(site))
    composition = compose("snf", "warm", (), {"k": 1})
    assert composition.label == "SNF+WarmTimeout"
    assert part_identity("warm") == {"part": "warm", "entry_point": "mywarm.warm:WarmTimeout",
                                     "distribution": "mywarm", "version": "0.3"}
    assert part_identity("mywarm.warm:WarmTimeout") == {
        "part": "mywarm.warm:WarmTimeout", "distribution": "mywarm", "version": "0.3"}
    assert part_identity("icon") is None
