"""The parts users can name: the built-in table, installed plugins and their own classes.

A part is named in one of three ways wherever a part name is accepted
(``snficon run --order/--power/--layer``, pybatsim's ``-o '{"power": ...}'``,
campaign and robin files, the Gymnasium environment):

* a name of the built-in table :data:`PARTS` (``snf``, ``icon``...);
* a name of the entry-point group ``snficon.parts`` of an installed
  distribution (``[project.entry-points."snficon.parts"] warm = "pkg.mod:Cls"``);
* a spec ``package.module:Class`` or ``path/to/file.py:Class`` (a path relative
  to the working folder).

A user's part class implements one kind's protocol of
:mod:`snficon.core.parts`, recognised by its methods: ``dispatch`` and
``plan``, a dispatch order; ``decide``, a power manager; ``admit`` and
``amend``, a layer. Its options are the fields of its optional ``Params``
attribute, a frozen dataclass checked like a built-in part's
(:func:`snficon.core.params.params_from_options`); it is built as
``Class(params)``, or ``Class(params, p_sleep_w)`` when its constructor takes
two arguments (the platform's per-node sleep power, W). Its label in reports
is the class's name.

:func:`compose` checks a choice of parts and their options and returns a
:class:`Composition`; :meth:`Composition.build` makes the run's
:class:`~snficon.core.policy.Policy`. Options are addressed by flat name
(``alpha``: the one part of the composition that has it) or by part
(``icon.alpha``); a flat name two parts share must be addressed by part.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import importlib.metadata
import importlib.util
import inspect
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from snficon.core.carbon_icon import CarbonIconParams, build_carbon_icon
from snficon.core.carbon_layer import CarbonLayerParams, build_carbon_layer
from snficon.core.controller import IconPower
from snficon.core.dispatch import EasyOrder, SnfOrder
from snficon.core.ipm import IpmPower
from snficon.core.params import (
    EasyParams,
    IconParams,
    IpmParams,
    NoParams,
    RlParams,
    node_count_errors,
    params_from_options,
    unknown_option_error,
)
from snficon.core.parts import KINDS, LAYER, ORDER, POWER, PartSpec
from snficon.core.policy import Policy
from snficon.core.time_limits import TimeLimitParams, build_time_limits
from snficon.errors import InputError

#: The entry-point group installed distributions register their parts in.
ENTRY_POINT_GROUP = "snficon.parts"

#: How a user's class is named where a part name is accepted.
SPEC_FORM = "package.module:Class or path/to/file.py:Class"

#: The methods that make a class a part of each kind.
KIND_METHODS = {ORDER: ("dispatch", "plan"), POWER: ("decide",), LAYER: ("admit", "amend")}

#: What each kind is called in messages.
KIND_NAMES = {ORDER: "dispatch order", POWER: "power manager", LAYER: "layer"}


def _build_rl(params: RlParams, p_sleep_w: np.ndarray) -> Any:
    from snficon.rl.power import build_rl_power  # PyTorch, only when built

    return build_rl_power(params, p_sleep_w)


#: The built-in parts, by name.
PARTS: dict[str, PartSpec] = {spec.name: spec for spec in (
    PartSpec("snf", ORDER, "SNF", NoParams, lambda params, p_sleep: SnfOrder(),
             "smallest-need-first (eq. 4), sequential PSAS plan"),
    PartSpec("fcfs-easy", ORDER, "FCFS/B", EasyParams, lambda params, p_sleep: EasyOrder(params),
             "first-come-first-served with EASY backfilling (SPEC 5)"),
    PartSpec("ipm", POWER, "IPM", IpmParams, lambda params, p_sleep: IpmPower(params),
             "PSAS wake planning and the idle timeout"),
    PartSpec("icon", POWER, "ICON", IconParams, IconPower,
             "SNF-ICON's Markovianity-gated warm-spare controller (Algorithm 1)"),
    PartSpec("rl", POWER, "RL", RlParams, _build_rl,
             "RL Budiarjo's learned power manager (attention actor-critic, snficon.rl)"),
    PartSpec("time-limits", LAYER, "TL", TimeLimitParams, build_time_limits,
             "checkpoint-aware time limits: enforce, early-cancel, extend or hybrid"),
    PartSpec("icon-carbon", POWER, "ICON/C", CarbonIconParams, build_carbon_icon,
             "SNF-ICON's controller with J(x)'s energy weighted by carbon intensity"),
    PartSpec("coast", LAYER, "COAST", CarbonLayerParams, build_carbon_layer("coast"),
             "COAST's carbon- and congestion-aware start times (the congestion game)"),
    PartSpec("carbon-greedy", LAYER, "CG", CarbonLayerParams, build_carbon_layer(
        "carbon-greedy"), "each flexible job alone at its lowest-carbon start"),
    PartSpec("carbon-wait", LAYER, "CW", CarbonLayerParams, build_carbon_layer("carbon-wait"),
             "each flexible job alone minimising carbon plus waiting"),
)}


def is_spec(name: str) -> bool:
    """Whether ``name`` names a class (``module:Class`` or ``file.py:Class``)."""
    return ":" in name


def absolute_spec(name: str) -> str:
    """``name`` with a file spec's path made absolute (from the working folder), so that
    another process (a pybatsim scheduler, a campaign worker) finds the same file."""
    source, _, class_name = name.rpartition(":")
    if not is_spec(name) or not _is_file(source):
        return name
    return f"{Path(source).resolve()}:{class_name}"


def installed_parts() -> dict[str, importlib.metadata.EntryPoint]:
    """The parts installed distributions register in the group ``snficon.parts``, by name."""
    return {ep.name: ep for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}


def part_names(kind: str) -> list[str]:
    """The names of the built-in parts of one kind (``order``, ``power`` or ``layer``)."""
    return [name for name, spec in PARTS.items() if spec.kind == kind]


def known_parts_text(kind: str) -> str:
    """The parts of a kind one may name, as text for help and error messages."""
    installed = [name for name in installed_parts() if name not in PARTS]
    return (", ".join(part_names(kind) + installed) +
            f"; or a class: {SPEC_FORM}")


def part_label(name: str) -> str:
    """A part's label without loading it: the built-in label, else the class's name."""
    if name in PARTS:
        return PARTS[name].label
    ep = installed_parts().get(name)
    target = ep.value if ep is not None else name
    return target.rpartition(":")[2] if ":" in target else name


def parts_label(parts: Sequence[str]) -> str:
    """The label of a composition from its parts' labels, joined by ``+``."""
    return "+".join(part_label(name) for name in parts)


def _file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _load_file(path_text: str, spec: str) -> Any:
    path = Path(path_text)
    if not path.is_file():
        raise InputError(f"part {spec}: file {path_text} not found")
    # Named by its content: loaded once per process, loaded again once the file changes.
    module_name = f"snficon_part_{path.stem}_{_file_sha256(path)[:12]}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    module_spec = importlib.util.spec_from_file_location(module_name, path)
    if module_spec is None or module_spec.loader is None:
        raise InputError(f"part {spec}: {path_text} cannot be loaded as Python")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[module_name] = module  # dataclasses read their module while made
    try:
        module_spec.loader.exec_module(module)
    except SyntaxError as exc:
        del sys.modules[module_name]
        raise InputError(f"part {spec}: {path_text}, line {exc.lineno}: syntax error: "
                         f"{exc.msg}") from None
    except Exception as exc:  # anything the user's file raises while loading
        del sys.modules[module_name]
        raise InputError(f"part {spec}: {path_text} failed to load: "
                         f"{type(exc).__name__}: {exc}") from None
    return module


def _load_module(module_name: str, spec: str) -> Any:
    try:
        return importlib.import_module(module_name)
    except SyntaxError as exc:
        raise InputError(f"part {spec}: module {module_name}, {exc.filename} line "
                         f"{exc.lineno}: syntax error: {exc.msg}") from None
    except Exception as exc:  # not found, or anything it raises while imported
        raise InputError(f"part {spec}: module {module_name} failed to import: "
                         f"{type(exc).__name__}: {exc}") from None


def _is_file(source: str) -> bool:
    return source.endswith(".py") or "/" in source or "\\" in source


def load_class(spec: str) -> type:
    """The class a spec ``package.module:Class`` or ``path/to/file.py:Class`` names;
    InputError in one line naming the module or file and the problem."""
    source, _, class_name = spec.rpartition(":")
    if not source or not class_name:
        raise InputError(f"part {spec!r}: expected {SPEC_FORM}")
    module = _load_file(source, spec) if _is_file(source) else _load_module(source, spec)
    cls = getattr(module, class_name, None)
    if not isinstance(cls, type):
        raise InputError(f"part {spec}: {source} has no class {class_name}")
    return cls


def part_kind(cls: type) -> str:
    """The kind of a user's part class, from the methods it has (:data:`KIND_METHODS`)."""
    kinds = [kind for kind in KINDS
             if all(callable(getattr(cls, method, None)) for method in KIND_METHODS[kind])]
    if len(kinds) != 1:
        wanted = "; ".join(f"{KIND_NAMES[k]}: {', '.join(m)}" for k, m in KIND_METHODS.items())
        raise InputError(f"part class {cls.__name__}: {'no' if not kinds else 'more than one'}"
                         f" kind's methods found (needs exactly one of {wanted})")
    return kinds[0]


def class_part(spec: str, cls: type) -> PartSpec:
    """The part a user's class makes (see the module docstring for the protocol)."""
    kind = part_kind(cls)
    params = getattr(cls, "Params", NoParams)
    if not (dataclasses.is_dataclass(params) and isinstance(params, type)
            and params.__dataclass_params__.frozen):
        raise InputError(f"part {spec}: {cls.__name__}.Params must be a frozen dataclass")
    try:
        arity = len([p for p in inspect.signature(cls).parameters.values()
                     if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)])
    except (TypeError, ValueError):
        arity = 1
    if arity > 2:
        raise InputError(f"part {spec}: {cls.__name__}(params) or {cls.__name__}(params, "
                         f"p_sleep_w) expected, its constructor takes {arity} arguments")

    def build(values: Any, p_sleep_w: np.ndarray) -> Any:
        return cls(*(values, p_sleep_w)[:arity])

    summary = (inspect.getdoc(cls) or "").partition("\n")[0]
    return PartSpec(spec, kind, cls.__name__, params, build, summary)


def resolve_part(name: str) -> PartSpec:
    """The part ``name`` names: built-in, installed (entry point) or a spec (a class)."""
    if name in PARTS:
        return PARTS[name]
    if is_spec(name):
        return class_part(name, load_class(name))
    ep = installed_parts().get(name)
    if ep is None:
        raise InputError(f"unknown part {name!r} (known: {', '.join([*PARTS, *installed_parts()])}"
                         f"; or a class: {SPEC_FORM})")
    try:
        cls = ep.load()
    except Exception as exc:  # anything the plugin raises while imported
        raise InputError(f"part {name}: entry point {ep.value} failed to load: "
                         f"{type(exc).__name__}: {exc}") from None
    return class_part(name, cls)


def _part(name: str, kind: str) -> PartSpec:
    if not isinstance(name, str) or not name:
        raise InputError(f"a {KIND_NAMES[kind]} is named by text, not {name!r}")
    if name not in PARTS and not is_spec(name) and name not in installed_parts():
        raise InputError(f"unknown {kind} {name!r} (known: {known_parts_text(kind)})")
    spec = resolve_part(name)
    if spec.kind != kind:
        raise InputError(f"unknown {kind} {name!r}: it is a {KIND_NAMES[spec.kind]}, not a "
                         f"{KIND_NAMES[kind]} (known: {known_parts_text(kind)})")
    return spec


def _distribution_of(module_name: str) -> importlib.metadata.Distribution | None:
    top = module_name.partition(".")[0]
    names = importlib.metadata.packages_distributions().get(top, [])
    return importlib.metadata.distribution(names[0]) if names else None


def part_identity(name: str) -> dict[str, str] | None:
    """What identifies a part's code beyond its name: None for a built-in part (the
    project's own code); else its spec with its distribution's version, or the SHA-256
    of its file (a file spec, or a module no distribution installs)."""
    if name in PARTS:
        return None
    if is_spec(name):
        source = name.rpartition(":")[0]
        if _is_file(source):
            return {"part": name, "sha256": _file_sha256(Path(source))}
        module = sys.modules.get(source) or importlib.import_module(source)
        dist = _distribution_of(source)
        if dist is not None:
            return {"part": name, "distribution": dist.metadata["Name"],
                    "version": dist.version}
        return {"part": name, "sha256": _file_sha256(Path(inspect.getfile(module)))}
    ep = installed_parts()[name]
    dist = ep.dist
    return {"part": name, "entry_point": ep.value,
            "distribution": dist.metadata["Name"] if dist else "",
            "version": dist.version if dist else ""}


def parts_identity(parts: Sequence[str]) -> dict[str, dict[str, str]]:
    """The identities of the parts that are not built in, by part name (empty for a
    composition of built-in parts)."""
    found = {name: part_identity(name) for name in parts}
    return {name: identity for name, identity in found.items() if identity is not None}


def identity_digest(identity: Mapping[str, str]) -> str:
    """One text that changes when a part's code does: its file's SHA-256, else its
    distribution's name and version."""
    if "sha256" in identity:
        return identity["sha256"]
    return f"{identity.get('distribution', '')} {identity.get('version', '')}"


@dataclass(frozen=True)
class Composition:
    """A checked choice of parts and the parameters of each (by part name)."""

    order: str
    power: str
    layers: tuple[str, ...]
    params: Mapping[str, Any]
    specs: Mapping[str, PartSpec] = dataclasses.field(default_factory=dict, compare=False,
                                                      repr=False)

    @property
    def parts(self) -> tuple[str, ...]:
        return (self.order, self.power, *self.layers)

    @property
    def label(self) -> str:
        """``ORDER+POWER[+LAYER...]`` from the parts' labels (e.g. ``FCFS/B+ICON``)."""
        return "+".join(self.specs[name].label if name in self.specs else part_label(name)
                        for name in self.parts)

    def build(self, p_sleep_w: np.ndarray) -> Policy:
        """The policy for a run on a platform with per-node sleep power ``p_sleep_w`` (W)."""
        self.check_node_counts(len(p_sleep_w))
        made = [self.specs[name].build(self.params[name], p_sleep_w) for name in self.parts]
        return Policy(order=made[0], power=made[1], layers=tuple(made[2:]))


    def check_node_counts(self, nb_nodes: int) -> None:
        """Refuse an option counting nodes (``option(..., nodes=True)``, e.g. the spare
        bounds of eq. 29-31) above ``nb_nodes``, the platform's: the policy would otherwise
        clamp it without a word."""
        for name in self.parts:
            for fault in node_count_errors(self.params[name], nb_nodes):
                raise InputError(f"option {fault} of part {name!r} is more than the "
                                 f"platform's {nb_nodes} nodes")


def compose(order: str, power: str, layers: Sequence[str] = (),
            options: Mapping[str, Any] | None = None) -> Composition:
    """Check a composition and its options; raise InputError naming the fault.

    Each part is a built-in name, an installed part's name or a spec
    (:func:`resolve_part`). ``options`` are flat names or ``part.name``; each
    goes to the part that has the field, and each part's parameters dataclass
    checks its own values.
    """
    specs = [_part(order, ORDER), _part(power, POWER), *(_part(n, LAYER) for n in layers)]
    if len({spec.name for spec in specs}) != len(specs):
        raise InputError(f"a part is named twice in {[spec.name for spec in specs]}")
    fields = {spec.name: {f.name for f in dataclasses.fields(spec.params)} for spec in specs}
    chosen: dict[str, dict[str, Any]] = {spec.name: {} for spec in specs}
    for key, value in (options or {}).items():
        part, dot, name = key.rpartition(".")
        if dot:
            if part not in chosen:
                raise InputError(f"option {key!r}: {part!r} is not a part of this policy "
                                 f"({', '.join(chosen)})")
            owners = [part] if name in fields[part] else []
        else:
            owners = [p for p, names in fields.items() if name in names]
        if len(owners) > 1:
            raise InputError(f"option {key!r} belongs to {' and '.join(owners)}: write "
                             f"{' or '.join(f'{o}.{name}' for o in owners)}")
        if not owners:
            scope = part if dot else None
            known = sorted(fields[scope] if scope else set().union(*fields.values()))
            raise unknown_option_error(name, known, f"part {scope}" if scope else
                                       "+".join(chosen))
        chosen[owners[0]][name] = value
    params = {spec.name: params_from_options(spec.params, chosen[spec.name], spec.name)
              for spec in specs}
    return Composition(order=order, power=power, layers=tuple(layers), params=params,
                       specs={spec.name: spec for spec in specs})
