"""The daemon's view of checkpoints (``snficon.core.checkpoints``), worked by hand.

The paper's construction: a 24-h limit scaled 60x down is 1440 s, checkpoints
every 7 scaled minutes (420 s) from the start, the daemon polls every 20 s.
"""

from __future__ import annotations

import pytest

from snficon.core.checkpoints import (
    CheckpointSchedule,
    daemon_action,
    next_poll,
    predicted_next,
)

PAPER = CheckpointSchedule(interval_s=420.0)


def test_checkpoint_times_and_counts():
    """c_k = start + offset + k x 420: 427, 847, 1267 for a start at 7 s; by 1267 exactly
    three are written, by 1266.9 two; none before the first."""
    assert [PAPER.time_of(7.0, k) for k in (1, 2, 3)] == [427.0, 847.0, 1267.0]
    assert PAPER.reached(7.0, 1267.0) == 3
    assert PAPER.reached(7.0, 1266.9) == 2
    assert PAPER.reached(7.0, 100.0) == 0
    assert CheckpointSchedule(100.0, offset_s=50.0).reached(0.0, 149.0) == 0
    assert CheckpointSchedule(100.0, offset_s=50.0).reached(0.0, 150.0) == 1


def test_polls_are_on_the_global_grid():
    """Polls at 0, 20, 40...: 1267 is seen at 1280, 1260 at 1260 (a few ulps below
    counts as on the poll), anything at once with poll 0."""
    assert next_poll(1267.0, 20.0) == 1280.0
    assert next_poll(1260.0, 20.0) == 1260.0
    assert next_poll(1260.0 + 1e-9, 20.0) == 1260.0
    assert next_poll(1267.0, 0.0) == 1267.0


def test_prediction_is_exact_without_offset_and_late_with_one():
    """No offset: after k reports the mean interval is 420, so c_k + 420 = c_{k+1}.
    Offset 100, interval 100, start 0: c_1 = 200, predicted 200 + 200 = 400 while c_2 =
    300 (late by offset / k = 100)."""
    assert predicted_next(7.0, PAPER, 3) == PAPER.time_of(7.0, 4)
    skewed = CheckpointSchedule(interval_s=100.0, offset_s=100.0)
    assert predicted_next(0.0, skewed, 1) == 400.0
    assert predicted_next(0.0, skewed, 2) == 300.0 + 150.0


def test_the_daemon_acts_at_the_poll_after_the_last_fitting_checkpoint():
    """Start 7, limit end 7 + 1440 = 1447: checkpoints 427, 847, 1267 fit, the 4th
    (1687) does not. The daemon sees 1267 at the poll 1280 and predicts 1687 > 1447.
    With poll 0 it acts at 1267 itself."""
    action = daemon_action(7.0, 1447.0, PAPER, 20.0)
    assert (action.time_s, action.seen, action.predicted_s) == (1280.0, 3, 1687.0)
    assert daemon_action(7.0, 1447.0, PAPER, 0.0).time_s == 1267.0


def test_no_action_when_the_job_times_out_before_the_daemon_sees_its_checkpoint():
    """Start 5, limit 1270 (end 1275): the last fitting checkpoint 1265 is seen at the
    poll 1280, after the end: the job times out first. A limit shorter than the first
    interval gives the daemon nothing to go on."""
    assert daemon_action(5.0, 1275.0, PAPER, 20.0) is None
    assert daemon_action(5.0, 1275.0, PAPER, 0.0).time_s == 1265.0
    assert daemon_action(0.0, 400.0, PAPER, 0.0) is None


def test_a_poll_on_the_limit_itself_still_acts():
    """Start 0, limit 1280: c_3 = 1260 seen at 1260... with poll 40 at 1280 = the end."""
    action = daemon_action(0.0, 1280.0, PAPER, 40.0)
    assert action is not None and action.time_s == 1280.0


def test_an_offset_can_make_the_daemon_act_one_checkpoint_early():
    """Interval 100, offset 100, start 0, end 330: c_1 = 200, c_2 = 300 both fit, but
    after c_1 the daemon predicts 400 > 330 and acts at 200 (its estimate is wrong,
    as the paper's limitations section warns)."""
    skewed = CheckpointSchedule(interval_s=100.0, offset_s=100.0)
    action = daemon_action(0.0, 330.0, skewed, 0.0)
    assert (action.time_s, action.seen, action.predicted_s) == (200.0, 1, 400.0)


def test_a_slow_poll_sees_several_checkpoints_at_once():
    """Interval 30, no offset, start 0, end 100, poll 50: checkpoints 30, 60, 90.
    The poll at 50 sees 1 (predicts 60, fits); the poll at 100 sees 3 and predicts
    120 > 100: it acts at 100 having seen 3."""
    action = daemon_action(0.0, 100.0, CheckpointSchedule(30.0), 50.0)
    assert (action.time_s, action.seen) == (100.0, 3)
    assert action.predicted_s == pytest.approx(120.0)
