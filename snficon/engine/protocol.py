"""Payloads of Batsim 4 protocol events that carry more than a few fields."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from snficon.platform.model import Platform
from snficon.workload.model import JobSpec, Workload

#: The ``config`` map of ``SIMULATION_BEGINS`` as Batsim 4.2 sends it by default.
BATSIM_CONFIG: dict[str, Any] = {
    "redis-enabled": False, "redis-hostname": "127.0.0.1", "redis-port": 6379,
    "redis-prefix": "default", "profiles-forwarded-on-submission": False,
    "dynamic-jobs-enabled": False, "dynamic-jobs-acknowledged": False,
    "profile-reuse-enabled": False, "sched-config": "", "forward-unknown-events": False,
}


def begins_data(platform: Platform, workloads: Sequence[Workload],
                labels: Sequence[str]) -> dict[str, Any]:
    """The data of ``SIMULATION_BEGINS``: resources, workloads ``w0, w1...`` and their profiles.

    Each compute resource carries its host properties plus Batsim's ``role``.
    """
    resources = [
        {"id": host.id, "name": host.name, "state": "idle",
         "properties": {"role": "", **host.properties}, "zone_properties": {}}
        for host in platform.hosts]
    return {
        "nb_resources": len(resources), "nb_compute_resources": len(resources),
        "nb_storage_resources": 0, "allow_compute_sharing": False,
        "allow_storage_sharing": True, "config": dict(BATSIM_CONFIG),
        "compute_resources": resources, "storage_resources": [],
        "workloads": {f"w{i}": label for i, label in enumerate(labels)},
        "profiles": {f"w{i}": {name: dict(p.raw) for name, p in w.profiles.items()}
                     for i, w in enumerate(workloads)},
    }


def job_description(job: JobSpec, full_id: str) -> dict[str, Any]:
    """The job object of ``JOB_SUBMITTED``: the file's JSON, extra fields kept, id prefixed."""
    description = dict(job.raw)
    description["id"] = full_id
    return description


def parse_resources(text: str) -> tuple[np.ndarray, str]:
    """Machine ids of a Batsim resource set (``"0-3 7 9-10"``), sorted and unique, and the
    set's canonical text (intervals in increasing order, as Batsim writes them).

    Raises ValueError on anything else (an empty set included).
    """
    if not isinstance(text, str):
        raise ValueError(f"not a string: {text!r}")
    tokens = text.split()
    if not tokens:
        raise ValueError("empty resource set")
    ids: list[int] = []
    pieces: list[str] = []
    canonical, previous = True, -2
    for token in tokens:
        low, sep, high = token.partition("-")
        first = int(low)
        last = int(high) if sep else first
        if first < 0 or last < first:
            raise ValueError(f"bad interval {token!r}")
        canonical = canonical and first > previous + 1
        previous = last
        if first == last:
            ids.append(first)
            pieces.append(str(first))
        else:
            ids.extend(range(first, last + 1))
            pieces.append(f"{first}-{last}")
    nodes = np.array(ids, dtype=np.int64)
    if not canonical:
        nodes = np.unique(nodes)
        return nodes, format_resources(nodes)
    return nodes, " ".join(pieces)


def intervals(nodes: Iterable[int]) -> list[tuple[int, int]]:
    """Maximal runs of consecutive machine ids, ascending: [0, 1, 2, 7] -> [(0, 2), (7, 7)]."""
    ids = sorted({int(n) for n in nodes})
    runs: list[tuple[int, int]] = []
    first = last = ids[0]
    for node in ids[1:]:
        if node != last + 1:
            runs.append((first, last))
            first = node
        last = node
    runs.append((first, last))
    return runs


def format_resources(nodes: Iterable[int]) -> str:
    """Batsim's text for a set of machine ids: intervals joined by spaces (``"0-3 7"``)."""
    return " ".join(str(a) if a == b else f"{a}-{b}" for a, b in intervals(nodes))
