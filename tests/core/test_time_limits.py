"""The time-limit layer on hand-made cases (``snficon.core.time_limits``).

Every case runs on :class:`~tests.core.scripted_cluster.ScriptedCluster`
(nodes that never sleep, kills carried out at once as Batsim does) through a
whole composed policy: a dispatch order, a power manager and the layer. The
checkpointing job of most cases is the paper's: limit 1440 s (24 h scaled
60x down), a checkpoint every 420 s (7 scaled minutes) from its start, a
true runtime past any limit; the daemon polls every 20 s on the grid 0, 20,
40 ... and an extension adds a 20-s margin to the predicted checkpoint.
"""

from __future__ import annotations

import pytest

from snficon.core.names import Trigger
from snficon.core.time_limits import TimeLimitLayer, TimeLimitParams, limited_job
from snficon.core.view import ClusterView, QueuedJob, RunningJob
from snficon.errors import InputError

from .conftest import computing, table
from .scripted_cluster import ScriptedCluster, ScriptedJob, policy

CKPT = {"checkpoint_interval": 420.0}
ORDERS = ("fcfs-easy", "snf")
POWERS = ("ipm", "icon")


def paper_job(job_id: str = "a", *, limit: float = 1440.0, submit: float = 0.0,
              runtime: float = 5000.0, res: int = 1) -> ScriptedJob:
    return ScriptedJob(job_id, res, limit, runtime, submit, dict(CKPT))


def run(jobs, nodes=1, order="fcfs-easy", power="ipm", **options):
    return ScriptedCluster(nodes, jobs).run(policy(order, power, nodes, **options))


# ---------------------------------------------------------------------- one job alone


@pytest.mark.parametrize(("tl_policy", "poll", "end"), [
    ("baseline", 20.0, 1447.0),      # killed at its limit: 7 + 1440
    ("early-cancel", 20.0, 1280.0),  # c_3 = 7 + 3 x 420 = 1267, seen at the poll 1280
    ("early-cancel", 0.0, 1267.0),   # a daemon that sees it at once
    ("extend", 20.0, 1700.0),        # limit -> 1687 + 20; c_4 = 1687 seen at 1700
    ("extend", 0.0, 1687.0),         # cancelled right at c_4
    ("hybrid", 20.0, 1700.0),        # nobody waits: the extension delays no one
])
def test_one_checkpointing_job_under_each_policy(tl_policy, poll, end):
    """A job submitted at 7 s starts at once; its checkpoints fall at 427, 847, 1267
    (the three that fit in 7 + 1440 = 1447) and 1687. Its tail under the baseline is
    1447 - 1267 = 180 s; early cancellation leaves only the poll delay."""
    outcome = run([paper_job(submit=7.0)], tl_policy=tl_policy, tl_poll_s=poll)["a"]
    assert outcome.killed and outcome.start == 7.0
    assert outcome.end == pytest.approx(end, abs=1e-9)


@pytest.mark.parametrize("tl_policy", ["baseline", "early-cancel", "extend", "hybrid"])
def test_non_checkpointing_jobs_are_killed_at_their_limit_and_never_adjusted(tl_policy):
    """No checkpoint field: the layer only enforces the limit (500 s), whatever the
    policy; a job that ends before its limit (300 s of 500) completes."""
    jobs = [ScriptedJob("long", 1, 500.0, 900.0), ScriptedJob("short", 1, 500.0, 300.0)]
    ended = run(jobs, nodes=2, tl_policy=tl_policy)
    assert ended["long"].killed and ended["long"].end == 500.0
    assert not ended["short"].killed and ended["short"].end == 300.0


def test_a_job_without_a_limit_is_never_killed():
    """``reqtime`` 0 (an SWF job with no request and runtime 0) is no limit."""
    ended = run([ScriptedJob("free", 1, 0.0, 900.0)], tl_policy="early-cancel")
    assert not ended["free"].killed and ended["free"].end == 900.0


@pytest.mark.parametrize(("limit", "cancel_at", "extended_to"), [
    (1690.0, 1680.0, 2100.0),  # c_4 = 1680 fits: the daemon waits for it
    (1670.0, 1260.0, 1680.0),  # c_4 = 1680 does not fit: it acts after c_3 = 1260
])
def test_next_checkpoint_fits_or_not(limit, cancel_at, extended_to):
    """Start 0, checkpoints at 420, 840, 1260, 1680, 2100. With limit 1690 the 4th
    checkpoint fits, so the daemon acts only at 1680 (it then predicts 2100 > 1690):
    early cancellation at 1680; an extension to 2100 + 20, cancelled at 2100. With
    limit 1670 it does not: cancellation at 1260, or extension to 1680 + 20,
    cancelled at 1680. Polls (every 20 s from 0) fall on every checkpoint here."""
    early = run([paper_job(limit=limit)], tl_policy="early-cancel")["a"]
    extended = run([paper_job(limit=limit)], tl_policy="extend")["a"]
    assert early.end == cancel_at and extended.end == extended_to


def test_early_cancel_can_cut_a_job_that_would_have_completed():
    """The daemon does not know runtimes: a checkpointing job that would end at 1300 s
    (after c_3 = 1260, before its limit 1440) is cancelled at 1260 by early
    cancellation, and completes under the baseline."""
    assert run([paper_job(runtime=1300.0)], tl_policy="early-cancel")["a"].end == 1260.0
    baseline = run([paper_job(runtime=1300.0)], tl_policy="baseline")["a"]
    assert not baseline.killed and baseline.end == 1300.0


def test_an_extension_ends_at_the_checkpoint_the_daemon_sees_or_at_its_new_limit():
    """Offset 300: checkpoints at 720 and 1140 (interval 420, start 0) fit in 1440; after
    the second the daemon predicts 1140 + 1140 / 2 = 1710 (the true third is 1560), so
    with no margin the limit becomes 1710 and the daemon cancels at the poll after
    1560, 1560 itself. Offset 0, no margin, poll 50: the daemon sees c_3 = 1260 at
    1300 and sets the limit to c_4 = 1680; its next poll, 1700, is after that limit,
    so the limit kills the job at 1680."""
    offset = paper_job()
    offset.extra["checkpoint_offset"] = 300.0
    assert run([offset], tl_policy="extend", tl_margin_s=0.0)["a"].end == 1560.0
    assert run([paper_job()], tl_policy="extend", tl_margin_s=0.0,
               tl_poll_s=50.0)["a"].end == 1680.0


# ---------------------------------------------------------------------- the hybrid rule

def _two_node_case(*queued: ScriptedJob) -> list[ScriptedJob]:
    """Two nodes: the checkpointing job A (limit 1440) and B (no checkpoints, limit and
    runtime 5000) start at 0; ``queued`` arrive at 10, when no node is free."""
    b = ScriptedJob("b", 1, 5000.0, 5000.0)
    return [paper_job(), b, *queued]


@pytest.mark.parametrize("order", ORDERS)
def test_hybrid_extends_when_nobody_waits_for_the_nodes(order):
    """C (2 nodes, 100 s) can start only when both nodes are free: at 5000 (B's end)
    whether A ends at 1440 or at 1700. The extension delays no one: A is extended and
    cancelled after its 4th checkpoint (1680); C starts at 5000."""
    ended = run(_two_node_case(ScriptedJob("c", 2, 100.0, 100.0, 10.0)), nodes=2,
                order=order, tl_policy="hybrid")
    assert ended["a"].end == 1680.0 and ended["c"].start == 5000.0


@pytest.mark.parametrize("protect", ["all", "head"])
@pytest.mark.parametrize("order", ORDERS)
def test_hybrid_cancels_an_extension_that_would_delay_the_reserved_job(order, protect):
    """C (1 node, 100 s) is the queue's head: its reservation is A's node at 1440 (B's
    ends at 5000). Extending A to 1700 would move C's planned start to 1700, so the
    daemon cancels A at the poll after its 3rd checkpoint, 1260, and C starts then."""
    ended = run(_two_node_case(ScriptedJob("c", 1, 100.0, 100.0, 10.0)), nodes=2,
                order=order, tl_policy="hybrid", tl_protect=protect)
    assert ended["a"].end == 1260.0 and ended["c"].start == 1260.0


@pytest.mark.parametrize(("order", "protect", "a_end"), [
    ("fcfs-easy", "all", 1260.0),   # D (backfilled at 1440) would move: cancel
    ("fcfs-easy", "head", 1680.0),  # only the head C (at 5000) counts: extend
    ("snf", "all", 1260.0),         # D is SNF's first job, planned at 1440: cancel
    ("snf", "head", 1260.0),        # ... and it is also SNF's head: cancel
])
def test_which_queued_jobs_are_protected_depends_on_the_order(order, protect, a_end):
    """C (2 nodes, 100 s) then D (1 node, 300 s) wait. FCFS/EASY: C is the head,
    reserved at 5000; D is planned (backfilled) on A's node at 1440, ending 1740 <=
    5000. SNF: D (the smaller need) comes first, planned at 1440; C at 5000. An
    extension of A to 1700 moves D to 1700 and leaves C. D starts when A ends."""
    ended = run(_two_node_case(ScriptedJob("c", 2, 100.0, 100.0, 10.0),
                               ScriptedJob("d", 1, 300.0, 300.0, 10.0)), nodes=2,
                order=order, tl_policy="hybrid", tl_protect=protect)
    assert ended["a"].end == a_end and ended["d"].start == a_end


# ---------------------------------------------------------------------- with every part


@pytest.mark.parametrize("power", POWERS)
@pytest.mark.parametrize("order", ORDERS)
def test_the_layer_composes_with_every_order_and_power_manager(order, power):
    """Three paper jobs on 2 nodes: A and B start at 0, C waits for the first node freed.
    Early cancellation ends A and B at 1260 (c_3) and C, started then, at 2520; the
    baseline kills them at 1440 and 2880. The decisions log the kills."""
    jobs = [paper_job("a"), paper_job("b"), paper_job("c")]
    early = run(jobs, nodes=2, order=order, power=power, tl_policy="early-cancel")
    base = run(jobs, nodes=2, order=order, power=power, tl_policy="baseline")
    assert [early[j].end for j in "abc"] == [1260.0, 1260.0, 2520.0]
    assert [base[j].end for j in "abc"] == [1440.0, 1440.0, 2880.0]


# ---------------------------------------------------------------------- the view it admits


def test_an_extended_job_is_planned_with_its_new_limit():
    """After the extension of A (started at 0 on node 0, limit 1440 -> 1700), ``admit``
    shows node 0 released at 1700 and A's requested time as 1700; node 1 is unchanged."""
    layer = TimeLimitLayer(TimeLimitParams(tl_policy="extend"))
    a = QueuedJob("a", 1, 1440.0, 0.0, 0, {"reqtime": 1440.0, **CKPT})
    nodes = table([computing(1440.0), computing(900.0)])
    running = (RunningJob("a", (0,), 0.0, 1440.0), RunningJob("b", (1,), 0.0, 900.0))
    first = ClusterView(0.0, Trigger.ARRIVAL, nodes, (), running, arrivals=(a,))
    assert layer.admit(first) is first
    layer.jobs["a"].end_s, layer.jobs["a"].extended = 1700.0, True
    shown = layer.admit(ClusterView(1260.0, Trigger.CALLBACK, nodes, (), running))
    assert shown.nodes.release_req_s.tolist() == [1700.0, 900.0]
    assert [run.req_time_s for run in shown.running] == [1700.0, 900.0]


@pytest.mark.parametrize(("extra", "message"), [
    ({"reqtime": "1h"}, "job x: field 'reqtime' must be a finite number of seconds"),
    ({"reqtime": 100.0, "checkpoint_interval": 0}, "checkpoint interval must be > 0"),
    ({"reqtime": 100.0, "checkpoint_interval": 10, "checkpoint_offset": -1},
     "offset >= 0"),
])
def test_bad_checkpoint_fields_name_the_job(extra, message):
    with pytest.raises(InputError, match=message):
        limited_job(QueuedJob("x", 1, 100.0, 0.0, 0, extra), TimeLimitParams())


def test_the_field_names_are_options():
    """``tl_limit_field`` and ``tl_interval_field`` read other job fields."""
    params = TimeLimitParams(tl_limit_field="limit", tl_interval_field="every")
    record = limited_job(QueuedJob("x", 1, 100.0, 0.0, 0, {"limit": 60, "every": 7}), params)
    assert record.limit_s == 60.0 and record.schedule.interval_s == 7.0
