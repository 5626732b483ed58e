"""The paper's §VII numbers: quoted as printed, and the campaign's computed from its results."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from snficon.report.data import load_results
from snficon.report.paper_numbers import QUOTED, SECTION_7A, quoted_table, section_7a_table
from tests.report.conftest import REPO_ROOT, read_results_csv, relabelled

PAPER = REPO_ROOT.parent / "shared" / "papers" / "snf-icon.txt"


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("\u2013", "-").replace("\u2014", "-"))


@pytest.fixture(scope="module")
def paper_text() -> str:
    if not PAPER.is_file():
        pytest.skip(f"the paper's text is not at {PAPER} (shared folder absent)")
    return _flat(PAPER.read_text(encoding="utf-8"))


@pytest.mark.parametrize("number", SECTION_7A + QUOTED, ids=lambda n: f"{n.case}-{n.metric}")
def test_every_number_is_printed_in_the_paper(number, paper_text: str):
    if number.value is None:
        assert number.words and _flat(number.words) in paper_text
        return
    if number.ratio:  # "4.9, 5.8, and 4.8 times": the factor is in the sentence quoted
        assert f"{number.value:g}" in number.words and " times " in number.words
        assert _flat(number.words) in paper_text
        return
    unit = " MWh" if number.metric == "energy_wasted" and number.versus is None else "%"
    shown = f"{abs(number.value):g}"
    if number.high is not None:
        shown += f"-{number.high:g}"
    assert f"{shown}{unit}" in paper_text or f"{shown} MWh" in paper_text, shown
    if number.words:
        assert _flat(number.words) in paper_text


def test_section_7a_wait_numbers_in_the_papers_order(paper_text: str):
    """The six FCFS/B+IPM and five-plus-one SNF+IPM wait numbers, as one sentence gives them."""
    fcfs = [n.value for n in SECTION_7A if n.metric == "mean_wait" and n.versus == "fcfsbIpm"]
    snf = [n.value for n in SECTION_7A if n.metric == "mean_wait" and n.versus == "snfIpm"]
    sentence = paper_text.split("Relative to FCFS/B+IPM, SNF")[1].split("The base")[0]
    printed = [float(x) for x in re.findall(r"(\d+\.\d+)%", sentence)]
    assert printed == [-v for v in fcfs] + [-v for v in snf[:5]] + [snf[5]]


def test_section_7a_table_is_computed_from_the_results(family_results: Path,
                                                       slow_on_results: Path, tmp_path: Path):
    """Relabel the family campaign as the paper's Markovian case; each percent change is
    100 (SNF-ICON - baseline) / baseline of results.csv, and an extra campaign gets a column."""
    mine = relabelled(family_results, tmp_path / "a", platform="aoba-64",
                      workload="markovian-3000")
    other = relabelled(slow_on_results, tmp_path / "b", platform="aoba-64",
                       workload="markovian-3000")
    table = section_7a_table(load_results(mine), {"slow-on": load_results(other)})
    assert set(table["case"]) == {"Markovian 3000"}
    assert len(table) == 4
    for results, column in ((family_results, "this campaign (%)"), (slow_on_results,
                                                                     "slow-on (%)")):
        raw = read_results_csv(results)
        for _, row in table.iterrows():
            metric = {"mean wait": "mean_wait", "wasted energy": "energy_wasted"}[row["quantity"]]
            versus = {"FCFS/B+IPM": "fcfsbIpm", "SNF+IPM": "snfIpm"}[row["SNF-ICON vs"]]
            a = float(raw[("p8", "m120", "snficon", "")][metric])
            b = float(raw[("p8", "m120", versus, "")][metric])
            assert row[column] == pytest.approx(100 * (a - b) / b)
    assert (table["difference (pp)"] == table["this campaign (%)"] - table["paper (%)"]).all()
    assert table["slow-on (%)"].tolist() != pytest.approx(table["this campaign (%)"].tolist())


def test_quoted_and_7a_tables_are_empty_without_the_papers_cases(family_results: Path):
    frame = load_results(family_results)  # labels p8 / m120: none of the paper's cases
    assert section_7a_table(frame).empty
    assert quoted_table(frame).empty


def test_partial_workloads_are_not_the_papers_case(family_results: Path, tmp_path: Path):
    mine = relabelled(family_results, tmp_path / "a", platform="aoba-64",
                      workload="markovian-3000", workload_jobs="100")
    assert section_7a_table(load_results(mine)).empty


def test_rl_numbers_are_the_trained_models_against_snficon(tmp_path: Path):
    """RL Budiarjo's §VII-A numbers: percent changes and "times" factors against SNF-ICON of
    results.csv, from the trained model's run (not the untrained network's)."""
    columns = ["id", "status", "policy", "platform", "workload", "options", "mean_wait",
               "energy_wasted"]
    rows = [("snficon", "das2-fs1", "", 600.0, 1.0e10), ("rlBudiarjo", "das2-fs1", "", 9e3, 1e9),
            ("rlBudiarjo", "das2-fs1", "model=m/fs1-seed0.pt", 420.0, 4.5e10),
            ("snficon", "das2-fs2", "", 100.0, 2.0e10),
            ("rlBudiarjo", "das2-fs2", "model=m/fs2-seed0.pt", 250.0, 1.5e10)]
    with open(tmp_path / "results.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        for i, (policy, workload, options, wait, waste) in enumerate(rows):
            writer.writerow([f"r{i}", "done", policy, "aoba-64", workload, options, wait, waste])
    table = quoted_table(load_results(tmp_path)).set_index(["case", "quantity"])
    got = table["this campaign"].to_dict()
    assert got[("DAS2 FS1", "mean wait of RL Budiarjo vs SNF-ICON")] == "-30.00"
    assert got[("DAS2 FS1", "wasted energy of RL Budiarjo vs SNF-ICON")] == "4.50"
    assert got[("DAS2 FS2", "wasted energy of RL Budiarjo vs SNF-ICON")] == "-25.00"
    assert got[("DAS2 FS2", "mean wait of RL Budiarjo vs SNF-ICON")] == "2.50"
    assert table.loc[("DAS2 FS1", "wasted energy of RL Budiarjo vs SNF-ICON"), "unit"] == "x"
    assert table.loc[("DAS2 FS1", "wasted energy of RL Budiarjo vs SNF-ICON"), "paper"] == "4.90"
    assert ("DAS2 FS3", "mean wait of RL Budiarjo vs SNF-ICON") not in got  # not run
