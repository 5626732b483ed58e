"""Queue orders: SNF (paper Definition 3, eq. 4) and FCFS."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from snficon.core.order import fcfs_order, snf_order
from snficon.core.view import QueuedJob

from .conftest import job


def ids(jobs: list[QueuedJob]) -> list[str]:
    return [j.job_id for j in jobs]


def test_snf_sorts_by_nodes_then_requested_time_then_arrival():
    """Eq. 4: (r, tau, z) lexicographic.

    j0 (4 nodes) is last whatever its time; j1, j2, j3 need 2 nodes: j1 asks
    500 s, j2 and j3 100 s, so j2 (earlier arrival) then j3 then j1.
    """
    queue = [job("j0", 4, 10.0), job("j1", 2, 500.0), job("j2", 2, 100.0),
             job("j3", 2, 100.0)]
    assert ids(snf_order(queue)) == ["j2", "j3", "j1", "j0"]


def test_snf_last_tie_is_the_arrival_rank_not_the_id_text():
    """z is the arrival rank: ``w0!10`` arrived after ``w0!9`` although it sorts first as text."""
    first = job("w0!9", 1, 60.0, order=0)
    second = job("w0!10", 1, 60.0, order=1)
    assert ids(snf_order([second, first])) == ["w0!9", "w0!10"]


def test_snf_ignores_submission_time_before_the_arrival_rank():
    """Submission time is not part of eq. 4: a smaller job submitted later goes first."""
    queue = [job("j0", 3, 10.0, submit=0.0), job("j1", 1, 999.0, submit=50.0)]
    assert ids(snf_order(queue)) == ["j1", "j0"]


def test_fcfs_sorts_by_submission_then_arrival_rank():
    """FCFS: submission time, then arrival rank for simultaneous submissions."""
    queue = [job("j2", 1, 10.0, submit=5.0), job("j1", 8, 10.0, submit=5.0),
             job("j0", 2, 10.0, submit=7.0)]
    assert ids(fcfs_order(queue)) == ["j1", "j2", "j0"]


def test_orders_leave_their_input_alone():
    queue = (job("j1", 2, 10.0), job("j0", 1, 10.0))
    assert ids(snf_order(queue)) == ["j0", "j1"]
    assert ids(list(queue)) == ["j1", "j0"]


jobs_strategy = st.lists(
    st.tuples(st.integers(1, 4), st.sampled_from([10.0, 60.0, 3600.0]),
              st.sampled_from([0.0, 5.0, 9.0])),
    max_size=12)


@settings(deadline=None, derandomize=True, database=None, max_examples=60)
@given(specs=jobs_strategy)
def test_snf_is_a_permutation_in_key_order(specs):
    """Any queue: same jobs, non-decreasing (r, tau, z), so the dispatch may stop early."""
    queue = [job(f"j{i}", r, tau, submit=sub) for i, (r, tau, sub) in enumerate(specs)]
    ordered = snf_order(queue)
    assert sorted(ids(ordered)) == sorted(ids(queue))
    keys = [(j.res, j.req_time_s, j.order) for j in ordered]
    assert keys == sorted(keys)
    # Early stop is sound: every job after one of size r needs at least r nodes.
    sizes = [j.res for j in ordered]
    assert all(a <= b for a, b in zip(sizes, sizes[1:], strict=False))
