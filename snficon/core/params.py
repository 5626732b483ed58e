"""Parameters of the policy parts and their checking (the paper's Table I and SPEC 5).

Each part of a policy has one frozen parameters dataclass; every field is a
pybatsim ``-o`` option under the same name (``snficon run --set NAME=VALUE``,
a campaign's ``options``). A field's ``metadata`` states its allowed range;
:func:`params_from_options` checks type and range of every option and names
the rule it breaks, and suggests the closest name for an unknown one. The
options table of ``docs/concepts/policies.md`` lists them next to their symbols.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
from dataclasses import dataclass, field
from typing import Any

from snficon.core.names import DEFAULT_TIMEOUT_S
from snficon.errors import InputError


def option(default: Any, *, low: float | None = None, high: float | None = None,
           low_open: bool = False, high_open: bool = False,
           choices: tuple[str, ...] | None = None, nodes: bool = False) -> Any:
    """A parameter field with default ``default`` and the allowed range [low, high].

    ``low_open``/``high_open`` exclude the bound itself (e.g. a rate > 0).
    ``choices``: the values a text option (a ``str`` field) may take; a text
    option without choices takes any non-empty text (e.g. a field name).
    ``nodes``: the option counts nodes, so it may not exceed the platform's node
    count either (checked once the platform is known: :func:`node_count_errors`).
    """
    if choices is not None and default not in choices:
        raise ValueError(f"default {default!r} is not one of the choices {choices}")
    return field(default=default, metadata={"low": low, "high": high, "low_open": low_open,
                                            "high_open": high_open, "choices": choices,
                                            "nodes": nodes})


def node_count_errors(params: Any, nb_nodes: int) -> list[str]:
    """The options of ``params`` (a parameters dataclass) declared as counting nodes
    (``option(..., nodes=True)``) whose value exceeds ``nb_nodes``, each as
    ``'name' (value)``."""
    return [f"{spec.name!r} ({getattr(params, spec.name)})"
            for spec in dataclasses.fields(params)
            if spec.metadata.get("nodes") and getattr(params, spec.name) is not None
            and getattr(params, spec.name) > nb_nodes]


def describe_range(meta: dict[str, Any]) -> str:
    """The rule of a field's range as text, e.g. ``> 0`` or ``in (0, 1]``."""
    low, high = meta.get("low"), meta.get("high")
    if low is not None and high is not None:
        return (f"in {'(' if meta['low_open'] else '['}{low:g}, {high:g}"
                f"{')' if meta['high_open'] else ']'}")
    if low is not None:
        return f"{'>' if meta['low_open'] else '>='} {low:g}"
    if high is not None:
        return f"{'<' if meta['high_open'] else '<='} {high:g}"
    return ""


def _in_range(value: float, meta: dict[str, Any]) -> bool:
    low, high = meta.get("low"), meta.get("high")
    if low is not None and (value < low or meta["low_open"] and value == low):
        return False
    return not (high is not None and (value > high or meta["high_open"] and value == high))


def _kind(cls: Any, spec: dataclasses.Field) -> type:
    """The value type of a field: bool, int, float or str (``int | None`` is int)."""
    hints = {"bool": bool, "int": int, "float": float, "str": str, "int | None": int,
             "float | None": float}
    annotation = spec.type if isinstance(spec.type, str) else getattr(spec.type, "__name__", "")
    if annotation not in hints:
        raise TypeError(f"{cls.__name__}.{spec.name}: unsupported option type {annotation!r}")
    return hints[annotation]


def check_value(cls: Any, spec: dataclasses.Field, value: Any) -> Any:
    """``value`` converted to the field's type, or InputError naming the rule it breaks.

    Booleans are not numbers, whole-number options take whole numbers only
    (3.0 is 3, 2.5 is refused), numbers are finite unless the range allows
    infinity, text options take text (one of their ``choices`` when they have
    some, else any non-empty text), and ``None`` is accepted only where the
    default is None.
    """
    name = spec.name
    if value is None:
        if spec.default is None:
            return None
        raise InputError(f"option {name!r}: null is not allowed (default {spec.default!r})")
    kind = _kind(cls, spec)
    given = value
    if kind is bool:
        if not isinstance(value, bool):
            raise InputError(f"option {name!r}: {value!r} is not a boolean (true or false)")
        return value
    if kind is str:
        return _check_text(name, value, spec.metadata.get("choices"))
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(f"option {name!r}: {value!r} is not a number")
    if kind is int:
        if not (isinstance(value, int) or math.isfinite(value) and value == int(value)):
            raise InputError(f"option {name!r}: {value!r} is not a whole number")
        value = int(value)
    else:
        value = float(value)
        if math.isnan(value):
            raise InputError(f"option {name!r}: NaN is not a number")
    meta = spec.metadata
    if not _in_range(value, meta) or (kind is float and math.isinf(value)
                                      and meta.get("high") != math.inf):
        rule = describe_range(meta) or "finite"
        raise InputError(f"option {name!r}: {given!r} is out of range (must be {rule})")
    return value


def _check_text(name: str, value: Any, choices: tuple[str, ...] | None) -> str:
    """A text option's value, or InputError: not text, not one of ``choices``, or empty."""
    if not isinstance(value, str):
        allowed = f"one of {', '.join(choices)}" if choices else "text"
        raise InputError(f"option {name!r}: {value!r} is not text (must be {allowed})")
    if choices is not None and value not in choices:
        close = difflib.get_close_matches(value, choices, n=1, cutoff=0.5)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise InputError(f"option {name!r}: {value!r} is not one of {', '.join(choices)}{hint}")
    if choices is None and not value.strip():
        raise InputError(f"option {name!r}: empty text is not allowed")
    return value


def unknown_option_error(name: str, known: list[str], where: str = "") -> InputError:
    """The error for an unknown option: the closest known name, then all of them."""
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.5)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    scope = f" for {where}" if where else ""
    return InputError(f"unknown option {name!r}{scope}{hint} (known: {', '.join(sorted(known))})")


def params_from_options(cls: Any, options: dict[str, Any], where: str = "") -> Any:
    """Instantiate the frozen parameters dataclass ``cls`` from a dict of options.

    Every value is checked by :func:`check_value`; an unknown key is an error
    that suggests the closest known one; then ``cls.check()`` (when defined)
    checks rules between fields.
    """
    known = {spec.name: spec for spec in dataclasses.fields(cls)}
    for name in options:
        if name not in known:
            raise unknown_option_error(name, list(known), where)
    params = cls(**{name: check_value(cls, known[name], value)
                    for name, value in options.items()})
    check = getattr(params, "check", None)
    if check is not None:
        check()
    return params


@dataclass(frozen=True)
class NoParams:
    """A part without options."""


@dataclass(frozen=True)
class EasyParams:
    """FCFS with EASY backfilling (SPEC 5). ``easy_plan``: the future plan that drives
    PSAS wake-ups, ``"gaps"`` (the authors' code: every waiting job in the earliest hole
    that disturbs no earlier one, :func:`~snficon.core.easy_plan.easy_gap_plan`) or ``"head"``
    (the head's reservation alone, :func:`~snficon.core.easy_plan.easy_plan`)."""

    easy_plan: str = option("gaps", choices=("gaps", "head"))


@dataclass(frozen=True)
class IpmParams:
    """IPM, the idle-timeout power manager (SPEC 5). ``timeout``: Delta_t (s).

    ``request_end_calls``: while a node sleeps, also ask to be called T_on before each
    running job's requested end (the authors' code; SPEC 5, IPM callbacks), so that a
    request that runs out is re-planned in time to wake nodes (False: only the plan's
    earliest wake time and the next timer expiry).
    """

    timeout: float = option(DEFAULT_TIMEOUT_S, low=0.0)
    request_end_calls: bool = option(True)


@dataclass(frozen=True)
class IconParams:
    """Table I of the paper (times in s, rates in 1/s, energies in J)."""

    alpha: float = option(5000.0, low=0.0)  # waiting weight (eq. 38)
    beta: float = option(1.0, low=0.0)  # energy weight (eq. 38)
    lambda0: float = option(1.0 / 3600.0, low=0.0, low_open=True)  # initial arrival rate
    rho_a: float = option(0.2, low=0.0, high=1.0, low_open=True)  # arrival EMA (eq. 17)
    rho_s: float = option(0.1, low=0.0, high=1.0, low_open=True)  # service EMA (eq. 18, App. A)
    rho_r: float = option(0.1, low=0.0, high=1.0, low_open=True)  # requested-node EMA (eq. 19)
    sigma_min: float = option(0.25, low=0.0)  # log-ratio sigma floor (App. A)
    s_min: int = option(1, low=0, nodes=True)  # minimum spare nodes
    s_max: int | None = option(None, low=0, nodes=True)  # maximum (None: platform size)
    h_max: float = option(24 * 3600.0, low=0.0, low_open=True)  # maximum horizon (eq. 24)
    t_a_max: float = option(12 * 3600.0, low=0.0)  # arrival-recency window (Definition 7)
    fallback: bool = option(True)  # Markovianity fallback (False: the NF variant)
    gate: bool = option(True)  # arrival-recency gate (False: the NG variant)
    t_m: float = option(2 * 3600.0, low=0.0, low_open=True)  # screen time window T_M
    n_min: int = option(3, low=1)  # minimum screen samples
    n_max: int = option(1000, low=1)  # maximum screen samples
    delta_cv: float = option(0.45, low=0.0)  # CV tolerance (eq. 6)
    delta_rho: float = option(0.65, low=0.0, high=1.0)  # maximum |rho_1| (eq. 9)
    kappa_m: float = option(1.25, low=0.0, low_open=True)  # KS multiplier (eq. 10)
    kappa_0: float = option(3.0, low=0.0, low_open=True)  # KS scale parameter (eq. 10)
    require_service_samples: bool = option(True)  # A(t) needs the service series (eq. 11)
    stale_completion_shutdown: bool = option(True)  # gate closed: switch off released nodes
    respect_timeout: bool = option(True)  # idle nodes switched off only once their timer expired
    timeout: float = option(DEFAULT_TIMEOUT_S, low=0.0)  # IPM idle timeout Delta_t
    request_end_calls: bool = option(True)  # the IPM fallback's request-end calls (SPEC 5)
    epsilon: float = option(1e-9, low=0.0, low_open=True)  # numerical floor of rates (eq. 17-18)

    def check(self) -> None:
        """Rules between fields: S_min <= S_max and n_min <= n_max."""
        if self.s_max is not None and self.s_min > self.s_max:
            raise InputError(f"options 's_min' ({self.s_min}) and 's_max' ({self.s_max}): "
                             "s_min must be <= s_max")
        if self.n_min > self.n_max:
            raise InputError(f"options 'n_min' ({self.n_min}) and 'n_max' ({self.n_max}): "
                             "n_min must be <= n_max")

    @property
    def ipm(self) -> IpmParams:
        """The parameters of the IPM fallback (Algorithm 1, lines 3-5): the same timeout
        and request-end calls (:class:`IpmParams`)."""
        return IpmParams(timeout=self.timeout, request_end_calls=self.request_end_calls)


@dataclass(frozen=True)
class RlParams:
    """The learned power manager of RL Budiarjo (:mod:`snficon.rl.power`).

    ``model``: a checkpoint written by ``snficon rl train`` (``model.pt``), or
    ``untrained``: the network initialised from ``init_seed`` (what the
    authors' code evaluates, its actor never being trained). ``greedy``: the
    most likely action (evaluation), else sampled with ``seed``. ``period``:
    the agent decides on its own clock, every ``period`` seconds (the authors'
    decision period ``rl.dt``; 0: at every invocation); ``every_event``: at
    every invocation, called back ``period`` after one while a node has a
    choice. After ``idle_calls`` invocations in a row without an arrival or a
    completion: no more calls, and no switches while no job runs or waits (so
    a run ends). ``guard``: wake the nodes the first waiting job needs when
    nothing else would ever start it.
    ``threads``: PyTorch threads.
    """

    model: str = option("untrained")
    init_seed: int = option(0, low=0)
    greedy: bool = option(True)
    seed: int = option(0, low=0)
    period: float = option(3600.0, low=0.0)
    every_event: bool = option(False)
    idle_calls: int = option(24, low=0)
    guard: bool = option(True)
    threads: int = option(1, low=1)
