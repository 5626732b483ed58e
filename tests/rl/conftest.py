"""Power figures and cluster states for the RL tests.

The node states come from the core tests' builders (:mod:`tests.core.conftest`:
idle 100 W, switch-on 30 s for 4500 J, switch-off 10 s for 500 J); the power
model adds what a :class:`NodeTable` lacks: sleep 10 W, busy 200 W, so every
state draws a distinct power and hand computations stay simple.

PyTorch runs the tests on one thread: the networks are tiny, and on a
2-core machine shared with other work two threads make an update several
times slower (measured here: 31 ms with 2 threads, 5 ms with 1).
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from snficon.platform.model import PowerModel
from tests.core.conftest import E_OFF_J, E_ON_J, P_IDLE_W, T_OFF_S, T_ON_S

P_SLEEP_W = 10.0
P_BUSY_W = 200.0
P_ON_W = E_ON_J / T_ON_S  # 150 W
P_OFF_W = E_OFF_J / T_OFF_S  # 50 W


def power_model(n: int) -> PowerModel:
    """``n`` identical nodes with the figures above."""
    def full(value: float) -> np.ndarray:
        return np.full(n, value)

    return PowerModel(p_idle_w=full(P_IDLE_W), p_busy_w=full(P_BUSY_W),
                      p_sleep_w=full(P_SLEEP_W), t_off_s=full(T_OFF_S), p_off_w=full(P_OFF_W),
                      t_on_s=full(T_ON_S), p_on_w=full(P_ON_W), can_sleep=np.ones(n, bool))


@pytest.fixture(autouse=True)
def one_torch_thread():
    """Run each test with PyTorch on one thread (when the test module imported it)."""
    torch = sys.modules.get("torch")
    if torch is None:
        yield
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
