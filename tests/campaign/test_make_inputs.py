"""``snficon campaign FILE --make-inputs``: missing inputs made by their ``make`` commands."""

from __future__ import annotations

import pytest

CAMPAIGN = """
[platforms]
p4 = "inputs/p4.xml"
[workloads]
w8 = "inputs/w8.json"
made = {{ file = "inputs/made.json", make = "{make}" }}
{extra}
[[group]]
name = "g"
platforms = ["p4"]
workloads = ["w8", "made"{more}]
policies = ["fcfsbIpm"]
"""


@pytest.fixture
def campaign_making(write_campaign, tmp_path, monkeypatch):
    """A campaign whose workload ``made`` is missing and made by ``make`` (run in tmp_path)."""
    monkeypatch.chdir(tmp_path)

    def write(make: str, extra: str = "", more: str = ""):
        return write_campaign(CAMPAIGN.format(make=make, extra=extra, more=more))

    return write


def test_missing_input_message_points_to_make_inputs(campaign_making, tmp_path, run_cli):
    path = campaign_making("cp inputs/w8.json inputs/made.json")
    code, _, err = run_cli(str(path), "-o", str(tmp_path / "results"))
    assert code == 2
    assert "make it with: cp inputs/w8.json inputs/made.json" in err
    assert "--make-inputs runs these commands" in err
    assert not (tmp_path / "inputs" / "made.json").exists()


def test_make_inputs_makes_then_runs_the_campaign(campaign_making, tmp_path, run_cli):
    path = campaign_making("echo making; cp inputs/w8.json inputs/made.json")
    results = tmp_path / "results"
    code, out, err = run_cli(str(path), "-o", str(results), "--make-inputs",
                             "--executor", "serial")
    assert code == 0, err
    assert ("[1/1] making workload made (inputs/made.json): echo making; cp inputs/w8.json "
            "inputs/made.json") in err
    assert "[1/1] made inputs/made.json (" in err
    assert (tmp_path / "inputs" / "made.json").is_file()
    assert "2 runs: 2 done now" in out
    # a second time nothing is missing: nothing is made
    code, out, err = run_cli(str(path), "-o", str(results), "--make-inputs",
                             "--executor", "serial")
    assert code == 0 and "making" not in err and "2 done before" in out


def test_a_failing_make_command_stops_the_campaign(campaign_making, tmp_path, run_cli):
    path = campaign_making("exit 3")
    results = tmp_path / "results"
    code, _, err = run_cli(str(path), "-o", str(results), "--make-inputs")
    assert code == 2
    assert "workload made: its make command failed (exit 3)" in err
    assert not (results / "runs").exists()


def test_a_make_command_that_writes_nothing_is_reported(campaign_making, tmp_path, run_cli):
    path = campaign_making("true")
    code, _, err = run_cli(str(path), "-o", str(tmp_path / "results"), "--make-inputs")
    assert code == 2
    assert "succeeded but inputs/made.json is still missing" in err


def test_nothing_is_made_when_an_input_has_no_command(campaign_making, tmp_path, run_cli):
    path = campaign_making("cp inputs/w8.json inputs/made.json",
                           extra='bare = "inputs/bare.json"', more=', "bare"')
    code, _, err = run_cli(str(path), "-o", str(tmp_path / "results"), "--make-inputs")
    assert code == 2
    assert "gives no command to make it" in err and "bare.json" in err
    assert not (tmp_path / "inputs" / "made.json").exists()
