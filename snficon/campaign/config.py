"""Read and validate a campaign file (TOML).

A campaign names its inputs once, by label, then lists groups; each group is
a grid (cases x policies x sweep points)::

    name = "quick"

    [platforms]
    aoba-64 = "../platforms/aoba-64.xml"            # paths relative to this file

    [workloads]
    markovian = "../workloads/markovian-3000.json"
    markovian-500 = { file = "../workloads/markovian-3000.json", jobs = 500 }
    das2-fs2 = { file = "../workloads/das2-fs2-3000.json", make = "COMMAND THAT MAKES IT" }
    das2-fs1 = { file = "DAS2-fs1-2003-1.swf.gz", convert = { jobs = 3000, nb_res = 64 } }

    [[group]]
    name = "alpha"
    platforms = ["aoba-64"]                         # crossed with workloads ...
    workloads = ["markovian-500"]
    # cases = [["aoba-64", "markovian"], ...]       # ... or explicit pairs
    policies = ["snficon", "snficon-nf"]
    options = { beta = 1 }                          # fixed scheduler options
    sweep = { alpha = [10, 5000], t_m = { start = 3600, stop = 7200, step = 3600 } }
    # carbon = { signal = "gb-2023", offsets = 20, seed = 1 }   # see carbon_axis.py

A ``[carbon]`` table names carbon-intensity signals; a group's ``carbon`` key
adds start alignments to its grid (:mod:`snficon.campaign.carbon_axis`). A
workload given as a trace is converted once per campaign
(:mod:`snficon.campaign.conversion`); a ``[cluster]`` table says where
``--executor slurm`` runs (:mod:`snficon.campaign.cluster_settings`).

Checks that need the policies' parameter sets (an option a policy does not
have) are made by :mod:`snficon.campaign.expand`, through :meth:`Campaign.error`,
so that every message names the key and its line.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from snficon.campaign.carbon_axis import CarbonAxis, SignalFile, read_axis, read_signals
from snficon.campaign.cluster_settings import ClusterSettings, read_cluster
from snficon.campaign.conversion import TraceConversion, read_conversion
from snficon.campaign.errors import CampaignFileError
from snficon.campaign.locate import line_of
from snficon.campaign.size import FloatSpan
from snficon.policy_table import POLICIES

Scalar = bool | int | float | str
KeyPath = tuple[str | int, ...]

TOP_KEYS = ("name", "description", "platforms", "workloads", "carbon", "cluster", "group")
GROUP_KEYS = ("name", "description", "platforms", "workloads", "cases", "policies",
              "options", "sweep", "carbon", "transition_jitter", "seed")
RANGE_KEYS = ("start", "stop", "step")


@dataclass(frozen=True)
class InputFile:
    """A platform or workload the campaign names: its label, file and how to make it."""

    label: str
    path: Path  # resolved against the campaign file's folder
    written: str  # the path as written in the campaign file
    make: str | None = None  # the command that makes the file when it is missing
    jobs: int | None = None  # workloads: keep only the first ``jobs`` jobs
    #: Workloads: ``path`` is a trace, converted so (before ``jobs`` cuts it).
    convert: TraceConversion | None = None


@dataclass(frozen=True)
class Group:
    """One grid of runs: every case x policy x sweep point."""

    name: str
    index: int  # position among the file's [[group]] tables, from 0
    cases: tuple[tuple[str, str], ...]  # (platform label, workload label)
    policies: tuple[str, ...]
    options: tuple[tuple[str, Scalar], ...]
    sweep: tuple[tuple[str, Sequence[Scalar]], ...]  # lists as tuples, ranges lazy
    carbon: CarbonAxis | None = None  # start alignments of a carbon signal
    #: Not Batsim's model: switch durations drawn from Normal(mean, jitter x mean) with
    #: ``seed`` (``snficon run --transition-jitter``); 0 keeps Batsim's fixed durations.
    transition_jitter: float = 0.0
    seed: int | None = None


@dataclass(frozen=True)
class Campaign:
    """A validated campaign file."""

    source: str  # the file as named by the user
    folder: Path  # relative input paths start here
    name: str
    description: str
    platforms: dict[str, InputFile]
    workloads: dict[str, InputFile]
    groups: tuple[Group, ...]
    text: str
    signals: dict[str, SignalFile] = field(default_factory=dict)  # the [carbon] table
    cluster: ClusterSettings | None = None  # the [cluster] table

    def error(self, path: KeyPath, message: str) -> CampaignFileError:
        """An error at ``path`` (e.g. ``("group", 1, "sweep", "alpha")``), with its line."""
        names = [group.name for group in self.groups]
        return _error(self.source, self.text, path, message, names)


def read_campaign(path: str | Path) -> Campaign:
    """Load and validate the campaign file at ``path``; raise CampaignFileError on a fault."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CampaignFileError(source, "campaign file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CampaignFileError(source, f"cannot read the file: {exc}") from None
    try:
        return parse_campaign(text, source, Path(path).resolve().parent)
    except RecursionError:  # arrays or tables nested thousands deep
        raise CampaignFileError(source, "values nested too deeply to be a campaign") from None


def parse_campaign(text: str, source: str, folder: Path) -> Campaign:
    """Validate a campaign given as TOML text; relative paths are resolved from ``folder``."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:  # the message ends with "(at line L, column C)"
        raise CampaignFileError(source, f"TOML syntax error: {exc}") from None
    raw_groups = data.get("group")
    names = ([g.get("name") if isinstance(g, dict) else None for g in raw_groups]
             if isinstance(raw_groups, list) else [])
    reader = _Reader(source, text, names)
    reader.known(data, (), TOP_KEYS)
    name = reader.string(data, ("name",), default=Path(source).stem)
    description = reader.string(data, ("description",), default="")
    platforms = reader.inputs(data, "platforms", folder)
    workloads = reader.inputs(data, "workloads", folder)
    reader.signals = read_signals(reader, data, folder)
    cluster = read_cluster(reader, data)
    if not isinstance(raw_groups, list) or not raw_groups:
        raise reader.error(("group",), "a campaign needs at least one [[group]] table")
    groups = tuple(reader.group(raw, i, platforms, workloads) for i, raw in enumerate(raw_groups))
    seen: dict[str, int] = {}
    for group in groups:
        if group.name in seen:
            raise reader.error(("group", group.index, "name"),
                               f"group name {group.name!r} is already used by group "
                               f"#{seen[group.name] + 1}")
        seen[group.name] = group.index
    return Campaign(source=source, folder=folder, name=name, description=description,
                    platforms=platforms, workloads=workloads, groups=groups, text=text,
                    signals=reader.signals, cluster=cluster)


def describe_key(path: KeyPath, group_names: Sequence[Any] = ()) -> str:
    """``("group", 1, "sweep", "alpha")`` -> ``group "alpha-sweep".sweep.alpha``."""
    parts: list[str] = []
    rest = list(path)
    if len(rest) >= 2 and rest[0] == "group" and isinstance(rest[1], int):
        index = rest[1]
        name = group_names[index] if index < len(group_names) else None
        parts.append(f'group "{name}"' if isinstance(name, str) and name
                     else f"group #{index + 1}")
        rest = rest[2:]
    for part in rest:
        if isinstance(part, int) and parts:
            parts[-1] += f"[{part}]"
        else:
            parts.append(str(part))
    return ".".join(parts)


def _error(source: str, text: str, path: KeyPath, message: str,
           group_names: Sequence[Any]) -> CampaignFileError:
    return CampaignFileError(source, message, key=describe_key(path, group_names),
                             line=line_of(text, path))


class _Reader:
    """Typed access to the decoded TOML, raising errors that name the key and line."""

    def __init__(self, source: str, text: str, group_names: Sequence[Any]) -> None:
        self.source, self.text, self.group_names = source, text, group_names
        self.signals: dict[str, SignalFile] = {}

    def error(self, path: KeyPath, message: str) -> CampaignFileError:
        return _error(self.source, self.text, path, message, self.group_names)

    def known(self, table: dict[str, Any], path: KeyPath, keys: Sequence[str]) -> None:
        for key in table:
            if key not in keys:
                raise self.error(path + (key,), f"unknown key {key!r} (known: {', '.join(keys)})")

    def string(self, table: dict[str, Any], path: KeyPath, default: str | None = None) -> str:
        value = table.get(path[-1], default)
        if not isinstance(value, str) or (default is None and not value):
            raise self.error(path, f"expected a non-empty string, got {value!r}")
        return value

    def strings(self, table: dict[str, Any], path: KeyPath) -> tuple[str, ...]:
        value = table.get(path[-1])
        if (not isinstance(value, list) or not value
                or not all(isinstance(item, str) and item for item in value)):
            raise self.error(path, f"expected a non-empty array of strings, got {value!r}")
        if len(set(value)) < len(value):
            twice = sorted({item for item in value if value.count(item) > 1})
            raise self.error(path, f"{', '.join(map(repr, twice))} listed twice")
        return tuple(value)

    def inputs(self, data: dict[str, Any], kind: str, folder: Path) -> dict[str, InputFile]:
        table = data.get(kind)
        if not isinstance(table, dict) or not table:
            raise self.error((kind,), f"expected a [{kind}] table naming at least one file")
        found: dict[str, InputFile] = {}
        for label, entry in table.items():
            path: KeyPath = (kind, label)
            if isinstance(entry, str):
                entry = {"file": entry}
            if not isinstance(entry, dict):
                raise self.error(path, f"expected a path or a table {{file = ...}}, got {entry!r}")
            keys = ("file", "make", "jobs", "convert") if kind == "workloads" else ("file", "make")
            self.known(entry, path, keys)
            written = self.string(entry, path + ("file",))
            make = entry.get("make")
            if make is not None and (not isinstance(make, str) or not make):
                raise self.error(path + ("make",), f"expected a command (string), got {make!r}")
            jobs = entry.get("jobs")
            if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int)
                                     or jobs <= 0):
                raise self.error(path + ("jobs",), f"expected a positive integer, got {jobs!r}")
            convert = (read_conversion(self, entry, path, written) if kind == "workloads"
                       else None)
            found[label] = InputFile(label=label, path=(folder / written).resolve(),
                                     written=written, make=make, jobs=jobs, convert=convert)
        return found

    def group(self, raw: Any, index: int, platforms: dict[str, InputFile],
              workloads: dict[str, InputFile]) -> Group:
        path: KeyPath = ("group", index)
        if not isinstance(raw, dict):
            raise self.error(path, "expected a [[group]] table")
        self.known(raw, path, GROUP_KEYS)
        name = self.string(raw, path + ("name",))
        policies = self.strings(raw, path + ("policies",))
        for i, policy in enumerate(policies):
            if policy not in POLICIES:
                raise self.error(path + ("policies", i), f"unknown policy {policy!r} "
                                 f"(known: {', '.join(POLICIES)})")
        cases = self.cases(raw, path, platforms, workloads)
        options = self.options(raw.get("options", {}), path + ("options",))
        sweep = self.sweep(raw.get("sweep", {}), path + ("sweep",))
        for key, _ in sweep:
            if key in dict(options):
                raise self.error(path + ("sweep", key),
                                 f"option {key!r} is both fixed (options) and swept")
        jitter, seed = self.jitter(raw, path)
        return Group(name=name, index=index, cases=cases, policies=policies,
                     options=options, sweep=sweep,
                     carbon=read_axis(self, raw, path, self.signals),
                     transition_jitter=jitter, seed=seed)

    def jitter(self, raw: dict[str, Any], path: KeyPath) -> tuple[float, int | None]:
        """``transition_jitter`` (a share of the mean in [0, 1)) and its ``seed``."""
        jitter = raw.get("transition_jitter", 0.0)
        if isinstance(jitter, bool) or not isinstance(jitter, int | float) \
                or not math.isfinite(jitter) or not 0 <= jitter < 1:
            raise self.error(path + ("transition_jitter",),
                             f"expected a share of the mean in [0, 1), got {jitter!r}")
        seed = raw.get("seed")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)
                                 or seed < 0):
            raise self.error(path + ("seed",), f"expected an integer >= 0, got {seed!r}")
        if jitter and seed is None:
            raise self.error(path + ("transition_jitter",),
                             "a transition jitter needs a seed (key 'seed', e.g. 42)")
        if seed is not None and not jitter:
            raise self.error(path + ("seed",), "'seed' only seeds transition_jitter, "
                             "which is not set")
        return float(jitter), seed

    def cases(self, raw: dict[str, Any], path: KeyPath, platforms: dict[str, InputFile],
              workloads: dict[str, InputFile]) -> tuple[tuple[str, str], ...]:
        if "cases" in raw:
            for key in ("platforms", "workloads"):
                if key in raw:
                    raise self.error(path + (key,), "give either cases or platforms and "
                                     "workloads, not both")
            value = raw["cases"]
            if not isinstance(value, list) or not value:
                raise self.error(path + ("cases",), "expected a non-empty array of "
                                 '[platform, workload] pairs, e.g. [["aoba-64", "markovian"]]')
            pairs = []
            for i, pair in enumerate(value):
                if (not isinstance(pair, list) or len(pair) != 2
                        or not all(isinstance(item, str) for item in pair)):
                    raise self.error(path + ("cases", i), "expected a [platform, workload] "
                                     f"pair of labels, got {pair!r}")
                pairs.append((pair[0], pair[1]))
        else:
            chosen = [self.strings(raw, path + (key,)) for key in ("platforms", "workloads")]
            pairs = [(p, w) for p in chosen[0] for w in chosen[1]]
        for i, (platform, workload) in enumerate(pairs):
            for label, known, kind in ((platform, platforms, "platform"),
                                       (workload, workloads, "workload")):
                if label not in known:
                    where = path + (("cases", i) if "cases" in raw else (f"{kind}s",))
                    raise self.error(where, f"unknown {kind} {label!r} (the [{kind}s] table "
                                     f"names: {', '.join(known)})")
        return tuple(pairs)

    def options(self, value: Any, path: KeyPath) -> tuple[tuple[str, Scalar], ...]:
        if not isinstance(value, dict):
            raise self.error(path, f"expected a table of scheduler options, got {value!r}")
        for key, item in value.items():
            self.scalar(item, path + (key,))
        return tuple(sorted(value.items()))

    def sweep(self, value: Any, path: KeyPath) -> tuple[tuple[str, Sequence[Scalar]], ...]:
        if not isinstance(value, dict):
            raise self.error(path, f"expected a table of option -> values, got {value!r}")
        axes = []
        for key, values in value.items():
            where = path + (key,)
            if isinstance(values, dict):  # lazy: counted before any value is made
                axes.append((key, self.span(values, where)))
                continue
            if not isinstance(values, list) or not values:
                raise self.error(where, "expected a non-empty array of values or a range "
                                 "{start = ..., stop = ..., step = ...}")
            for i, item in enumerate(values):
                self.scalar(item, where + (i,))
            axes.append((key, tuple(values)))
        return tuple(axes)

    def span(self, table: dict[str, Any], path: KeyPath) -> range | FloatSpan:
        """``{start, stop, step}``: start, start + step, ... up to stop included, as a lazy
        sequence (:mod:`snficon.campaign.size` counts it before any value is made)."""
        self.known(table, path, RANGE_KEYS)
        numbers = []
        for key in RANGE_KEYS:
            item = table.get(key)
            if isinstance(item, bool) or not isinstance(item, int | float) \
                    or not math.isfinite(item):
                raise self.error(path + (key,), f"expected a number, got {item!r}")
            numbers.append(item)
        start, stop, step = numbers
        if step <= 0 or stop < start:
            raise self.error(path, f"expected start <= stop and step > 0, got {table!r}")
        if all(isinstance(item, int) for item in numbers):
            return range(start, stop + 1, step)
        if not math.isfinite((stop - start) / step):
            raise self.error(path, f"the range has more values than can be counted: {table!r}")
        return FloatSpan.between(start, stop, step)

    def scalar(self, value: Any, path: KeyPath) -> None:
        if isinstance(value, float) and not math.isfinite(value):
            raise self.error(path, f"expected a finite number, got {value!r}")
        if not isinstance(value, bool | int | float | str):
            raise self.error(path, f"expected a number, boolean or string, got {value!r}")
