"""The carbon-aware J(x) of SNF-ICON (``snficon.core.carbon_icon``, ``energy_weight``).

Nodes are the ``conftest`` defaults (idle 100 W, T_on 30 s for 4500 J, T_off 10 s
for 500 J, sleep 10 W). The signal is 100 gCO2/kWh for a day then 300 for a day
(median 200 over the file, the reference).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from snficon.carbon.signal import format_instant
from snficon.core.carbon_icon import CarbonIconParams, carbon_weight
from snficon.core.params import IconParams
from snficon.core.spare import SpareCosts, choose_spare_target
from snficon.errors import InputError
from snficon.part_registry import compose

from .conftest import sleeping, table

START = 1_672_531_200.0  # 2023-01-01T00:00Z


def two_level_signal(tmp_path: Path) -> Path:
    rows = [f"{format_instant(START + 1800 * k)},{100 if k < 48 else 300}" for k in range(96)]
    path = tmp_path / "two-level.csv"
    path.write_text("timestamp_utc,gco2_per_kwh\n" + "\n".join(rows) + "\n")
    return path


def spare(weight=None, **options):
    nodes, params = table([sleeping()] * 8), IconParams(**options)
    return choose_spare_target(nodes, SpareCosts.of(nodes, np.full(8, 10.0), params), 0.0,
                               1 / 600, 0.0, np.array([0.5, 0.3, 0.0, 0.2]), params,
                               energy_weight=weight)


class TestEnergyWeight:
    def test_none_and_one_are_the_papers_j(self):
        plain, one = spare(), spare(lambda now, h: 1.0)
        assert one.x == plain.x and np.array_equal(one.j_values, plain.j_values)

    def test_a_weight_multiplies_beta(self):
        """J_c = alpha W + beta c E: the same candidates' costs as beta' = c beta."""
        weighted = spare(lambda now, h: 2.5, alpha=2000.0)
        scaled = spare(alpha=2000.0, beta=2.5)
        assert np.allclose(weighted.j_values, scaled.j_values, rtol=1e-15)
        assert weighted.e_values == pytest.approx(scaled.e_values)  # E stays in joules

    def test_dirtier_power_holds_fewer_spares(self):
        """E(x) grows with x, so the chosen target does not grow with the weight."""
        targets = [spare(lambda now, h, c=c: c, alpha=3000.0).x for c in (0.1, 1.0, 10.0)]
        assert targets == sorted(targets, reverse=True) and targets[0] > targets[-1]


class TestCarbonWeight:
    def test_mean_over_the_horizon_over_the_median(self, tmp_path):
        params = CarbonIconParams(jx_signal=str(two_level_signal(tmp_path)),
                                  jx_start="2023-01-01T00:00Z")
        weight = carbon_weight(params)
        assert weight.reference == 200.0  # median of 48 x 100 and 48 x 300
        assert weight(0.0, 3600.0) == pytest.approx(0.5)
        assert weight(86400.0 - 3600.0, 7200.0) == pytest.approx((100 + 300) / 2 / 200)
        assert weight(86400.0, 0.0) == pytest.approx(1.5)  # H = 0: the intensity now

    def test_explicit_reference_and_a_missing_signal(self, tmp_path):
        params = CarbonIconParams(jx_signal=str(two_level_signal(tmp_path)), jx_reference=50.0)
        assert carbon_weight(params)(0.0, 3600.0) == pytest.approx(2.0)
        with pytest.raises(InputError, match="power icon-carbon needs a carbon-intensity "
                                             "signal.*jx_signal"):
            compose("snf", "icon-carbon").build(np.zeros(2))

    def test_the_part_is_icon_with_its_options(self):
        composition = compose("snf", "icon-carbon", (), {"alpha": 10.0, "jx_reference": 3.0})
        params = composition.params["icon-carbon"]
        assert isinstance(params, IconParams) and params.alpha == 10.0
        assert composition.label == "SNF+ICON/C"
