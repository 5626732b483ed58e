"""From a campaign to its runs: grid expansion, option resolution, run ids.

Each group expands to cases x policies x sweep points. A point's options are
resolved to the policy's full parameter set (its defaults filled in, the
paper's Table I for SNF-ICON), so that runs asking for the same thing in
different words (``t_m = 7200`` or nothing) are one run, listed once with
every group that asked for it. A run's id hashes its parameters: the input
labels and the SHA-256 of their files, ``jobs``, the policy and the resolved
options (:func:`snficon.campaign.runs.run_id`), and, for a group with a
carbon axis, the signal, its SHA-256 and the resolved start instant
(:mod:`snficon.campaign.carbon_axis`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from snficon.campaign.carbon_axis import CarbonPoint, SignalFile, resolve_start
from snficon.campaign.config import Campaign, Group, InputFile
from snficon.campaign.conversion import CACHE
from snficon.campaign.errors import MissingInputError
from snficon.campaign.provenance import Provenance, code_digest, package_version
from snficon.campaign.runs import run_id
from snficon.campaign.size import DEFAULT_MAX_RUNS, check_run_count
from snficon.errors import InputError
from snficon.part_registry import identity_digest, parts_identity
from snficon.policy_table import COMPOSITION_KEYS, policy_entry, resolved_options

#: Options the campaign sets for each run itself.
RESERVED_OPTIONS = ("platform", "decisions")


@dataclass(frozen=True)
class RunPlan:
    """A run before its inputs are read: what to simulate and which groups asked for it."""

    platform: InputFile
    workload: InputFile
    policy: str
    options: dict[str, Any]  # the policy's full, resolved options
    changed: tuple[tuple[str, Any], ...]  # those that differ from the policy's defaults
    groups: tuple[str, ...]
    transition_jitter: float = 0.0  # not Batsim's model (Group.transition_jitter)
    seed: int | None = None
    carbon: CarbonPoint | None = None  # the carbon signal and start alignment, if any

    @property
    def inputs(self) -> tuple[InputFile | SignalFile, ...]:
        """The files the run reads: platform, workload and carbon signal."""
        signal = (self.carbon.signal,) if self.carbon is not None else ()
        return (self.platform, self.workload, *signal)


@dataclass(frozen=True)
class RunSpec:
    """Everything :func:`~snficon.campaign.runs.execute` needs; picklable, paths absolute."""

    run_id: str
    params: dict[str, Any]  # hashed to run_id, stored as params.json
    platform_path: str
    workload_path: str
    runs_dir: str
    groups: tuple[str, ...] = ()
    changed: tuple[tuple[str, Any], ...] = ()
    carbon_path: str | None = None  # the carbon signal file (params["carbon"] says how)
    #: RESULTS/cache: traces converted once for every run (params["convert"] says how).
    cache_dir: str | None = None
    #: What the run is made with now (package version, code and input hashes).
    provenance: Provenance | None = None


@dataclass(frozen=True)
class Expansion:
    """The runs of a campaign, merged, and how many grid points listed them."""

    plans: tuple[RunPlan, ...]
    listed: int  # grid points before merging duplicates


def resolve_options(policy: str, settings: dict[str, Any]) -> dict[str, Any]:
    """The policy's full parameter set for ``settings``; raises InputError on a bad option.

    Checked by the parts' parameters dataclasses (:func:`snficon.policy_table.resolved_options`).
    """
    key = json.dumps(settings, sort_keys=True)
    return json.loads(_resolved(policy, key))


@lru_cache(maxsize=4096)
def _resolved(policy: str, settings_json: str) -> str:
    return json.dumps(resolved_options(policy, json.loads(settings_json)), sort_keys=True)


def changed_options(policy: str, options: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    """The resolved options that differ from the policy's defaults, sorted by name."""
    defaults = resolve_options(policy, {})
    return tuple(sorted((k, v) for k, v in options.items() if defaults.get(k, object()) != v))


def expand(campaign: Campaign, max_runs: int = DEFAULT_MAX_RUNS) -> Expansion:
    """Every run of the campaign, in file order, duplicates merged.

    The grid points are counted first (:func:`snficon.campaign.size.check_run_count`):
    a campaign listing more than ``max_runs`` is refused before any run is made.
    """
    check_run_count(campaign, max_runs)
    merged: dict[tuple[Any, ...], RunPlan] = {}
    listed = 0
    for group in campaign.groups:
        _check_options(campaign, group)
        axes = [values for _, values in group.sweep]
        names = [name for name, _ in group.sweep]
        alignments = group.carbon.points() if group.carbon is not None else (None,)
        for platform, workload in group.cases:
            for policy, point in itertools.product(group.policies, itertools.product(*axes)):
                settings = {**dict(group.options), **dict(zip(names, point, strict=True))}
                try:
                    options = resolve_options(policy, settings)
                except InputError as exc:
                    raise campaign.error(("group", group.index), f"{exc}") from None
                for carbon in alignments:
                    listed += 1
                    key = (platform, workload, policy, json.dumps(options, sort_keys=True),
                           carbon, group.transition_jitter, group.seed)
                    plan = merged.get(key)
                    if plan is None:
                        merged[key] = RunPlan(
                            platform=campaign.platforms[platform],
                            workload=campaign.workloads[workload], policy=policy,
                            options=options, changed=changed_options(policy, options),
                            groups=(group.name,), carbon=carbon,
                            transition_jitter=group.transition_jitter,
                            seed=group.seed)
                    elif group.name not in plan.groups:
                        merged[key] = dataclasses.replace(plan, groups=plan.groups + (group.name,))
    return Expansion(plans=tuple(merged.values()), listed=listed)


def _check_options(campaign: Campaign, group: Group) -> None:
    """Each option alone, for each policy, so that an error names the key at fault.

    An option is checked with the group's composition options (``order``,
    ``power``, ``layers``), which decide the parts it may belong to.
    """
    parts = {key: value for key, value in group.options if key in COMPOSITION_KEYS}
    keyed = [(("options", key), key, (value,)) for key, value in group.options]
    keyed += [(("sweep", key), key, values) for key, values in group.sweep]
    for where, key, values in keyed:
        path = ("group", group.index) + where
        if key in RESERVED_OPTIONS:
            raise campaign.error(path, f"option {key!r} is set by the campaign for each run")
        for policy in group.policies:
            for value in values:
                try:
                    resolve_options(policy, {**parts, key: value})
                except InputError as exc:
                    raise campaign.error(path, f"{key} = {value!r} for policy {policy}: "
                                         f"{exc}") from None


def missing_inputs(plans: tuple[RunPlan, ...] | list[RunPlan]) -> list[InputFile | SignalFile]:
    """The inputs the runs use that are not on disk, each once, in order."""
    seen: dict[Path, InputFile | SignalFile] = {}
    for plan in plans:
        for item in plan.inputs:
            if item.path not in seen and not item.path.is_file():
                seen[item.path] = item
    return list(seen.values())


def check_inputs(campaign: Campaign, plans: tuple[RunPlan, ...] | list[RunPlan]) -> None:
    """Raise MissingInputError, with the commands that make them, if inputs are missing."""
    missing = missing_inputs(plans)
    if not missing:
        return
    lines = [f"{campaign.source}: {len(missing)} input file(s) are not on disk, "
             "so the campaign did not start:"]
    for item in missing:
        lines.append(f"  {item.label}: {shown(item.path)} (written {item.written!r})")
        lines.append(f"    make it with: {item.make}" if item.make
                     else "    (the campaign file gives no command to make it: key 'make')")
    if all(item.make for item in missing):
        lines.append("  (--make-inputs runs these commands in this folder, then the campaign)")
    raise MissingInputError("\n".join(lines))


def shown(path: Path) -> str:
    """``path`` relative to the working folder when it is below it, else as is."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive
        return str(path)
    return str(path) if relative.startswith("..") else relative


def file_digest(path: Path, cache: dict[Path, str] | None = None) -> str:
    """SHA-256 of a file's bytes (memoised in ``cache``)."""
    if cache is not None and path in cache:
        return cache[path]
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    text = digest.hexdigest()
    if cache is not None:
        cache[path] = text
    return text


def run_params(plan: RunPlan, cache: dict[Path, str] | None = None,
               shapes: dict[tuple[str, str], tuple[float, float, int]] | None = None
               ) -> dict[str, Any]:
    """The parameters a run's id hashes (its inputs must exist); a carbon signal and a
    transition jitter are among them only when set, so that the other runs keep their
    ids; so are a trace's conversion options (``convert``). ``cache`` memoises file
    digests, ``shapes`` the carbon signals' first interval, step and size (by digest,
    :func:`~snficon.campaign.carbon_axis.resolve_start`)."""
    params = {"platform": plan.platform.label,
              "platform_sha256": file_digest(plan.platform.path, cache),
              "workload": plan.workload.label,
              "workload_sha256": file_digest(plan.workload.path, cache),
              "jobs": plan.workload.jobs, "policy": plan.policy, "options": plan.options}
    parts = plan_parts_identity(plan)
    if parts:  # parts of the user's own: their code is an input of the run
        params["parts"] = parts
    if plan.carbon is not None:
        signal = plan.carbon.signal
        digest = file_digest(signal.path, cache)
        params["carbon"] = {"signal": signal.label, "signal_sha256": digest,
                            "start": resolve_start(plan.carbon, {} if shapes is None else shapes,
                                                   digest),
                            "wrap": plan.carbon.wrap, "fill": signal.fill}
    if plan.workload.convert is not None:
        params["convert"] = plan.workload.convert.as_dict()
    if plan.transition_jitter:
        params.update(transition_jitter=plan.transition_jitter, seed=plan.seed)
    return params


def plan_parts_identity(plan: RunPlan) -> dict[str, dict[str, str]]:
    """The identity of each part of a run that is not built in (its spec and its file's
    SHA-256 or its distribution's version, :func:`~snficon.part_registry.part_identity`)."""
    order, power, layers = policy_entry(plan.policy).parts(plan.options)
    return parts_identity((order, power, *layers))


def make_specs(plans: tuple[RunPlan, ...] | list[RunPlan], runs_dir: str | Path) -> list[RunSpec]:
    """The runs with their ids, to be executed in ``runs_dir`` (RESULTS/runs)."""
    cache: dict[Path, str] = {}
    shapes: dict[tuple[str, str], tuple[float, float, int]] = {}
    folder = str(Path(runs_dir).resolve())
    cache_dir = str(Path(folder).parent / CACHE)
    specs: dict[str, RunSpec] = {}
    version, code = package_version(), code_digest()
    for plan in plans:
        params = run_params(plan, cache, shapes)
        ident = run_id(params)
        if ident in specs:  # e.g. two carbon offsets that fall on the same interval
            before = specs[ident]
            groups = before.groups + tuple(g for g in plan.groups if g not in before.groups)
            specs[ident] = dataclasses.replace(before, groups=groups)
            continue
        specs[ident] = RunSpec(
            run_id=ident, params=params, platform_path=str(plan.platform.path),
            workload_path=str(plan.workload.path), runs_dir=folder, groups=plan.groups,
            changed=plan.changed,
            carbon_path=str(plan.carbon.signal.path) if plan.carbon is not None else None,
            cache_dir=cache_dir,
            provenance=Provenance(version, code, input_digests(plan, cache)))
    return list(specs.values())


def input_digests(plan: RunPlan, cache: dict[Path, str] | None = None) -> dict[str, str]:
    """SHA-256 of each file a run reads, by role: the platform, the workload, the carbon
    signal, every option whose value names an existing file (``option:NAME``) and the
    code of each part not built in (``part:NAME``: its file's SHA-256 or its
    distribution's name and version)."""
    files = {"platform": plan.platform.path, "workload": plan.workload.path}
    if plan.carbon is not None:
        files["carbon"] = plan.carbon.signal.path
    for name, value in plan.options.items():
        if isinstance(value, str) and value and Path(value).is_file():
            files[f"option:{name}"] = Path(value)
    digests = {role: file_digest(Path(path), cache) for role, path in files.items()}
    for name, identity in plan_parts_identity(plan).items():
        digests[f"part:{name}"] = identity_digest(identity)
    return digests
