"""Policy options: SNF-ICON's parameters (the paper's Table I) and their parsing.

Every field is a pybatsim ``-o`` option of ``snficon`` under the same name;
the README lists them next to their symbols. ``s_max`` = None means the
platform size.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from snficon.errors import InputError


def params_from_options(cls: Any, options: dict[str, Any]) -> Any:
    """Instantiate the frozen parameter dataclass ``cls`` from a dict of options."""
    known = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise InputError(f"unknown option(s) {unknown} (known: {', '.join(sorted(known))})")
    values = {}
    for name, value in options.items():
        default = known[name].default
        if default is None and value is None:
            values[name] = None
            continue
        kind = type(default) if default is not None else int
        try:
            values[name] = kind(value) if kind is not bool or isinstance(value, bool) else None
        except (TypeError, ValueError):
            values[name] = None
        if values[name] is None:
            raise InputError(f"option {name!r}: {value!r} is not a {kind.__name__}")
    return cls(**values)


@dataclass(frozen=True)
class IconParams:
    """Table I of the paper (times in s, rates in 1/s, energies in J)."""

    alpha: float = 5000.0  # waiting weight (eq. 38)
    beta: float = 1.0  # energy weight (eq. 38)
    lambda0: float = 1.0 / 3600.0  # initial arrival rate
    rho_a: float = 0.2  # arrival EMA factor (eq. 17)
    rho_s: float = 0.1  # service / log-ratio EMA factor (eq. 18, App. A)
    rho_r: float = 0.1  # requested-node EMA factor (eq. 19)
    sigma_min: float = 0.25  # log-ratio sigma floor (App. A)
    s_min: int = 1  # minimum spare nodes
    s_max: int | None = None  # maximum spare nodes (None: platform size)
    h_max: float = 24 * 3600.0  # maximum horizon (eq. 24)
    t_a_max: float = 12 * 3600.0  # arrival-recency window (Definition 7)
    fallback: bool = True  # Markovianity fallback (False: the NF variant)
    gate: bool = True  # arrival-recency gate (False: the NG variant)
    t_m: float = 2 * 3600.0  # screen time window T_M
    n_min: int = 3  # minimum screen samples
    n_max: int = 1000  # maximum screen samples
    delta_cv: float = 0.45  # CV tolerance (eq. 6)
    delta_rho: float = 0.65  # maximum |rho_1| (eq. 9)
    kappa_m: float = 1.25  # KS multiplier (eq. 10)
    kappa_0: float = 3.0  # KS scale parameter (eq. 10)
    require_service_samples: bool = True  # A(t) needs the service series (eq. 11)
    stale_completion_shutdown: bool = True  # gate closed: switch off released nodes
    respect_timeout: bool = True  # idle nodes switched off only once their timer expired
    timeout: float = 2 * 3600.0  # IPM idle timeout Delta_t
    epsilon: float = 1e-9  # numerical floor of rates (eq. 17-18)

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> IconParams:
        """Build from ``-o`` JSON; an unknown key is an error listing the known ones."""
        return params_from_options(cls, options)
