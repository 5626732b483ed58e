r"""SNF-ICON with a carbon-aware J(x): the warm-spare energy term weighted by carbon intensity.

SNF-ICON chooses the warm-spare target x* by J(x) = alpha W(x) + beta E(x)
(paper, eq. 38), E(x) the non-compute energy over the capped horizon H
(eq. 24-25, 36-37). What a joule of idle power costs in carbon depends on
when it is drawn, so the carbon-aware controller (part ``icon-carbon``)
weighs that energy by the intensity expected over the same horizon:

.. math:: J_c(x) = \alpha W(x) + \beta\, \frac{\bar I(t, t + H)}{I_{ref}}\, E(x),
          \qquad \bar I(a, b) = \frac{1}{b - a}\int_a^b I,

with :math:`I_{ref}` the signal's median over its whole span (or
``jx_reference`` g/kWh): at median intensity J_c is the paper's J and
alpha keeps its meaning; at twice the median a joule weighs as two, so fewer
spares are held warm, and more when the grid is clean. The weight is one
number per decision, the same for every candidate (the candidates share H).
The intensity is the signal itself (no forecast noise). None of the systems
this project reproduces has it.

It is a part of its own rather than an option of ``icon`` so that the
parameters (and the run ids of campaigns) of every SNF-ICON run stay what
they were; its parameters are SNF-ICON's plus the ``jx_`` signal options of
:mod:`snficon.core.carbon_signal`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from snficon.carbon.mapping import MappedSignal
from snficon.carbon.signal import FILL_RULES
from snficon.core.carbon_signal import NO_SIGNAL, SIGNAL_FIRST, load_signal
from snficon.core.controller import IconPower
from snficon.core.params import IconParams, option
from snficon.errors import InputError


@dataclass(frozen=True)
class CarbonIconParams(IconParams):
    """SNF-ICON's Table I plus the carbon signal (``jx_signal``, ``jx_start``, ``jx_fill``,
    ``jx_wrap``) and ``jx_reference``, I_ref in g/kWh (0: the signal's median)."""

    jx_signal: str = option(NO_SIGNAL)
    jx_start: str = option(SIGNAL_FIRST)
    jx_fill: str = option("linear", choices=FILL_RULES)
    jx_wrap: bool = option(True)
    jx_reference: float = option(0.0, low=0.0)


@dataclass(frozen=True)
class CarbonWeight:
    r"""The weight :math:`\bar I(t, t + H) / I_{ref}` of J(x)'s energy term."""

    intensity: MappedSignal
    reference: float

    def __call__(self, now: float, horizon: float) -> float:
        return float(self.intensity.mean(now, now + horizon)) / self.reference


def carbon_weight(params: CarbonIconParams) -> CarbonWeight:
    """The weight of a run: its signal, and I_ref (the option, else the signal's median)."""
    signal = load_signal("power icon-carbon", "jx_", params.jx_signal, params.jx_start,
                         params.jx_fill, params.jx_wrap)
    reference = params.jx_reference or float(np.median(signal.signal.series.values))
    if not reference > 0:
        raise InputError(f"{signal.signal.source}: median intensity {reference!r}; give "
                         "jx_reference > 0")
    return CarbonWeight(signal, reference)


def build_carbon_icon(params: CarbonIconParams, p_sleep_w: np.ndarray) -> IconPower:
    """The parts table's builder: SNF-ICON's controller with the carbon weight."""
    return IconPower(params, p_sleep_w, energy_weight=carbon_weight(params))
