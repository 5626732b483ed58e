"""``snficon demo`` on a short workload: the table, the report, and inputs made when missing."""

from __future__ import annotations

import argparse
from pathlib import Path

from snficon.commands import demo as demo_command
from tests.report.conftest import REPO_ROOT


def run_demo(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="snficon")
    demo_command.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["demo", *argv])
    return args.func(args)


def test_demo_on_the_committed_inputs(tmp_path: Path, capsys):
    out = tmp_path / "demo"
    assert run_demo("-o", str(out), "--jobs", "200",
                    "--platform", str(REPO_ROOT / "platforms" / "aoba-64.xml"),
                    "--workload", str(REPO_ROOT / "workloads" / "markovian-3000.json")) == 0
    text = capsys.readouterr().out
    assert "made " not in text
    for label in ("FCFS/B+IPM", "SNF+IPM", "SNF-ICON", "mean wait (min)", "wasted (MWh)",
                  "ICON share"):
        assert label in text
    assert (out / "report.md").is_file() and (out / "report.html").is_file()
    assert (out / "results" / "results.csv").is_file()
    assert (out / "figures" / "base_comparison.png").is_file()


def test_demo_makes_missing_inputs(tmp_path: Path, capsys):
    platform, workload = tmp_path / "p" / "aoba-64.xml", tmp_path / "w" / "markovian-3000.json"
    assert run_demo("-o", str(tmp_path / "demo"), "--jobs", "50", "--platform", str(platform),
                    "--workload", str(workload)) == 0
    assert platform.is_file() and workload.is_file()
    committed = REPO_ROOT / "platforms" / "aoba-64.xml"
    assert platform.read_text() == committed.read_text()
    text = capsys.readouterr().out
    assert text.count("made ") == 2
