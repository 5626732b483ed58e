"""Payloads of Batsim 4 protocol events that carry more than a few fields."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from snficon.platform.model import Platform
from snficon.workload.model import Profile, Workload
from snficon.workload.packed import PackedProfiles

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

    Each compute resource carries its host properties plus Batsim's ``role``. The
    profiles are their workloads' own objects, not copies: an event's data is only
    ever read (encoded, or decoded into new objects for the scheduler).
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
        "profiles": {f"w{i}": dict(_profile_objects(w.profiles)) for i, w in enumerate(workloads)},
    }


def _profile_objects(profiles: Mapping[str, Profile]) -> Iterator[tuple[str, Any]]:
    """Each profile's name and JSON object, in the file's order (a packed workload's
    objects are decoded from their texts, already validated, without a profile each)."""
    if isinstance(profiles, PackedProfiles):
        return profiles.raw_items()
    return ((name, profile.raw) for name, profile in profiles.items())
