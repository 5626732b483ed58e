"""Robin files for a campaign's runs (``snficon campaign FILE --robin DIR``).

``DIR/<run id>.yaml`` holds one run (the id is the campaign's, so the files
match ``RESULTS/runs/<id>/``); its robin output folder is ``DIR/<run id>/``
(Batsim's files under the prefix ``out``, the scheduler's ``decisions.csv``,
robin's ``log/``). ``DIR/index.csv`` lists the files with their policy,
inputs and changed options. A workload the campaign cuts to its first jobs is
written once to ``DIR/workloads/<label>.json`` (a label that is not a plain
file name is spelt safely, :func:`snficon.safe_paths.label_file_name`); a trace the
campaign converts is converted once into ``DIR/cache/`` (:mod:`snficon.campaign.conversion`).

Paths in the commands are relative to the repository root when they are
below it (absolute otherwise): run the files from the repository root with
the root on ``PYTHONPATH`` (the nix shell sets it; ``snficon robin`` adds
it), e.g. ``robin DIR/<id>.yaml`` or ``snficon robin DIR/<id>.yaml``.
"""

from __future__ import annotations

import csv
import io
import json
import shlex
from collections.abc import Sequence
from pathlib import Path

from snficon.campaign.config import Campaign
from snficon.campaign.conversion import CACHE, converted_workload
from snficon.campaign.expand import RunPlan, check_inputs, file_digest, run_params
from snficon.campaign.results import option_text
from snficon.campaign.runs import DECISIONS, PREFIX, run_id, truncate_workload
from snficon.fileio import atomic_write_text
from snficon.policy_table import POLICIES
from snficon.registry import PROJECT_ROOT
from snficon.robin.files import DEFAULT_TIMEOUTS, RobinFile, write_robin
from snficon.safe_paths import file_in


def repo_path(path: str | Path) -> str:
    """``path`` relative to the repository root (POSIX) when below it, else absolute."""
    resolved = Path(path).resolve()
    try:
        return resolved.relative_to(PROJECT_ROOT).as_posix() or "."
    except ValueError:
        return str(resolved)


#: The scheduler's socket: on loopback only (pybatsim binds every interface by default).
ENDPOINT = "tcp://127.0.0.1:28000"


def batsim_command(platform: str, workload: str, output_dir: str) -> str:
    """``batsim -p P -w W -E -e OUT/out -s tcp://127.0.0.1:28000``."""
    return shlex.join(["batsim", "-p", platform, "-w", workload, "-E", "-e",
                       f"{output_dir}/{PREFIX}", "-s", ENDPOINT])


def pybatsim_command(policy: str, options: dict) -> str:
    """``pybatsim NAME -t 0 -o 'JSON' -s tcp://127.0.0.1:28000 -v warning``: NAME is the
    policy's ``schedulers/`` module (a variant runs as its parent's module, its presets
    among the options); the socket is bound to loopback, and ``-v warning`` keeps
    pybatsim from logging every message (about 11 MB for 3000 jobs)."""
    name = POLICIES[policy].pybatsim if policy in POLICIES else policy
    return shlex.join(["pybatsim", name, "-t", "0", "-o", json.dumps(options, sort_keys=True),
                       "-s", ENDPOINT, "-v", "warning"])


def write_campaign_robin(campaign: Campaign, plans: Sequence[RunPlan],
                         folder: str | Path) -> list[Path]:
    """Write one robin file per run in ``folder``; return their paths in run order.

    Raises MissingInputError when an input of ``plans`` is not on disk (``snficon
    campaign --robin`` passes only the runs whose inputs exist).
    """
    check_inputs(campaign, plans)
    folder = Path(folder)
    for plan in plans:  # every label checked before anything is written
        if plan.workload.jobs is not None:
            file_in(folder / "workloads", plan.workload.label, ".json",
                    source=campaign.source, what="workload label")
    folder.mkdir(parents=True, exist_ok=True)
    digests: dict[Path, str] = {}
    cut: dict[tuple[Path, int], str] = {}
    written: list[Path] = []
    rows = []
    for plan in plans:
        ident = run_id(run_params(plan, digests))
        output_dir = repo_path(folder / ident)
        source = plan.workload.path
        if plan.workload.convert is not None:
            source = converted_workload(source, file_digest(source, digests),
                                        plan.workload.convert, folder / CACHE).path
        workload = repo_path(source)
        if plan.workload.jobs is not None:
            key = (source, plan.workload.jobs)
            if key not in cut:
                target = file_in(folder / "workloads", plan.workload.label, ".json",
                                 source=campaign.source, what="workload label")
                target.parent.mkdir(exist_ok=True)
                truncate_workload(source, plan.workload.jobs, target)
                cut[key] = repo_path(target)
            workload = cut[key]
        platform = repo_path(plan.platform.path)
        options = dict(plan.options)
        if plan.policy in POLICIES:
            options.update(platform=platform, decisions=f"{output_dir}/{DECISIONS}")
        experiment = RobinFile(batcmd=batsim_command(platform, workload, output_dir),
                               schedcmd=pybatsim_command(plan.policy, options),
                               output_dir=output_dir, **{key.replace("-", "_"): float(value)
                                                         for key, value in
                                                         DEFAULT_TIMEOUTS.items()})
        changed = " ".join(f"{k}={option_text(v)}" for k, v in plan.changed)
        comment = (f"campaign {campaign.name}, run {ident}: {plan.policy} on "
                   f"{plan.platform.label} with {plan.workload.label}"
                   f"{' (' + changed + ')' if changed else ''}\n"
                   "Run from the repository root with it on PYTHONPATH (nix-shell "
                   "nix/shell.nix), or: snficon robin THIS.yaml [--engine embedded]")
        written.append(write_robin(folder / f"{ident}.yaml", experiment, comment))
        rows.append([f"{ident}.yaml", plan.policy, plan.platform.label, plan.workload.label,
                     changed, " ".join(plan.groups)])
    stream = io.StringIO()
    table = csv.writer(stream)
    table.writerow(["file", "policy", "platform", "workload", "options", "groups"])
    table.writerows(rows)
    atomic_write_text(folder / "index.csv", stream.getvalue())
    return written
