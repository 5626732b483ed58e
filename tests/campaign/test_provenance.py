"""Results that cannot be stale: a done run made by other code or inputs is run again."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from snficon.campaign.provenance import (
    PROVENANCE,
    Provenance,
    code_digest,
    read_provenance,
    stale_reason,
)
from snficon.campaign.runner import run_campaign
from snficon.campaign.runs import METRICS
from tests.campaign.test_runner import specs_of


def _package(root: Path) -> Path:
    for name, text in {"core/a.py": "x = 1\n", "engine/b.py": "y = 2\n",
                       "report/c.py": "z = 3\n", "commands/d.py": "w = 4\n"}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_code_digest_follows_run_code_only(tmp_path):
    """Editing a module that takes part in a run changes the hash; editing the report or a
    command line does not."""
    root = _package(tmp_path / "pkg")
    first = code_digest(root)
    (root / "report" / "c.py").write_text("z = 30\n")
    (root / "commands" / "d.py").write_text("w = 40\n")
    assert code_digest(root) == first
    (root / "engine" / "b.py").write_text("y = 3\n")
    assert code_digest(root) != first
    (root / "engine" / "b.py").write_text("y = 2\n")
    assert code_digest(root) == first
    (root / "engine" / "b.py").rename(root / "engine" / "e.py")  # same bytes, other module
    assert code_digest(root) != first


def test_stale_reasons():
    now = Provenance("1.0", "c0de", {"platform": "p", "workload": "w"})
    assert stale_reason(now, now) is None
    assert "before runs recorded" in stale_reason(None, now)
    assert "snficon 0.9" in stale_reason(dataclasses.replace(now, version="0.9"), now)
    assert "other code" in stale_reason(dataclasses.replace(now, code_sha256="old"), now)
    edited = dataclasses.replace(now, inputs={"platform": "p", "workload": "old"})
    assert stale_reason(edited, now) == "input file changed since: workload"


def _edit_provenance(folder: Path, **changes) -> None:
    path = folder / PROVENANCE
    record = json.loads(path.read_text())
    record.update(changes)
    path.write_text(json.dumps(record))


def test_a_run_made_by_other_code_is_reported_and_run_again(tiny_campaign, tmp_path):
    results = tmp_path / "results"
    specs = specs_of(tiny_campaign, results)
    run_campaign(specs, results, executor="serial")
    folders = [results / "runs" / spec.run_id for spec in specs]
    assert all(read_provenance(f) == spec.provenance for f, spec in zip(folders, specs,
                                                                         strict=True))
    _edit_provenance(folders[1], code_sha256="0" * 64)
    (folders[3] / PROVENANCE).unlink()  # a run from before provenance records
    mtimes = {f: (f / METRICS).stat().st_mtime_ns for f in folders}

    kept = run_campaign(specs_of(tiny_campaign, results), results, executor="serial",
                        reuse_stale=True)
    assert (kept.done, kept.skipped) == (0, 6)
    assert sorted(ident for ident, _ in kept.stale) == sorted([specs[1].run_id,
                                                               specs[3].run_id])
    assert all((f / METRICS).stat().st_mtime_ns == mtimes[f] for f in folders)

    again = run_campaign(specs_of(tiny_campaign, results), results, executor="serial")
    assert (again.done, again.skipped, again.failed) == (2, 4, 0)
    reasons = dict(again.stale)
    assert "other code" in reasons[specs[1].run_id]
    assert "before runs recorded" in reasons[specs[3].run_id]
    for index, folder in enumerate(folders):
        rerun = index in (1, 3)
        assert ((folder / METRICS).stat().st_mtime_ns != mtimes[folder]) == rerun
        assert read_provenance(folder) == specs[index].provenance
    assert run_campaign(specs, results, executor="serial").stale == []


def test_cli_reports_stale_runs(tiny_campaign, tmp_path, run_cli):
    results = tmp_path / "results"
    code, _, _ = run_cli(str(tiny_campaign), "-o", str(results), "--executor",
                         "serial")
    assert code == 0
    victim = next((results / "runs").iterdir())
    _edit_provenance(victim, version="0.0.1")
    code, out, _ = run_cli(str(tiny_campaign), "-o", str(results), "--executor",
                           "serial")
    assert code == 0
    assert "1 done runs were stale, run again (--reuse-stale keeps them)" in out
    assert "made by snficon 0.0.1" in out
    assert "1 done now, 5 done before" in out
