"""A workload kept compact for the engine: each job and profile as its JSON text.

A loaded :class:`~snficon.workload.model.Workload` holds the decoded JSON of
every job and profile, some 1.3 KB a job; over a million-job trace that is
more than the rest of a run. :func:`read_packed_workload` reads the file one
job at a time (:mod:`snficon.workload.stream`), validates each job as
:func:`~snficon.workload.reader.read_workload` does, and keeps of it only its
text, in one byte buffer, with its submission time, profile and id in arrays
(under 300 bytes a job). :meth:`PackedWorkload.spec` decodes one job again
when the engine needs it: the same text with the same number reader gives the
very values of the whole document.

The engine reads jobs through :class:`JobSource`; :class:`WorkloadJobs` is
one over a loaded :class:`Workload` (tests, or a file the stream reader left
to :func:`read_workload`).
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from snficon.workload.model import JobSpec, Profile, Workload
from snficon.workload.reader import parse_job, parse_profile, read_workload
from snficon.workload.stream import LeftToFullReader, stream_workload
from snficon.workload.texttable import TextList, TextTable, TextTableBuilder


class JobSource(Protocol):
    """The jobs of one workload by position, as the engine's job table reads them."""

    source: str

    @property
    def profiles(self) -> Mapping[str, Profile]:
        """Every profile by name, in the file's order."""
        ...

    def __len__(self) -> int:
        """The number of jobs."""
        ...

    def index_of(self, job_id: str) -> int | None:
        """The position of the job ``job_id`` (the file's id as a string), None if absent."""
        ...

    def spec(self, index: int) -> JobSpec:
        """The job at ``index``."""
        ...

    def id_of(self, index: int) -> str:
        """The id (as a string) of the job at ``index``."""
        ...

    def profile_of(self, index: int) -> Profile:
        """The profile of the job at ``index``."""
        ...

    def submission_order(self) -> Iterator[int]:
        """Positions in Batsim's submission order (subtime, then id string)."""
        ...


def in_submission_order(subtimes: np.ndarray, id_text: Callable[[int], str]) -> Iterator[int]:
    """Positions sorted by (subtime, id string), Batsim's ``job_comparator_subtime_number``.

    A stable sort by subtime, then each run of equal subtimes by its ids'
    strings: the order of ``sorted(jobs, key=(subtime, id))`` for unique ids,
    without a key per job.
    """
    order = np.argsort(subtimes, kind="stable")
    n = len(order)
    start = 0
    while start < n:
        stop = start + 1
        first = subtimes[order[start]]
        while stop < n and subtimes[order[stop]] == first:
            stop += 1
        if stop - start == 1:
            yield int(order[start])
        else:
            yield from sorted((int(i) for i in order[start:stop]), key=id_text)
        start = stop


@dataclass(eq=False)
class WorkloadJobs:
    """A :class:`JobSource` over a loaded workload (its jobs tuple, sorted by subtime)."""

    workload: Workload
    _index: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._index = {spec.id: i for i, spec in enumerate(self.workload.jobs)}

    @property
    def source(self) -> str:
        return self.workload.source

    @property
    def profiles(self) -> Mapping[str, Profile]:
        return self.workload.profiles

    def __len__(self) -> int:
        return len(self.workload.jobs)

    def index_of(self, job_id: str) -> int | None:
        return self._index.get(job_id)

    def spec(self, index: int) -> JobSpec:
        return self.workload.jobs[index]

    def id_of(self, index: int) -> str:
        return self.workload.jobs[index].id

    def profile_of(self, index: int) -> Profile:
        return self.workload.profiles[self.workload.jobs[index].profile]

    def submission_order(self) -> Iterator[int]:
        jobs = self.workload.jobs
        return iter(sorted(range(len(jobs)), key=lambda i: (jobs[i].subtime, jobs[i].id)))


#: Decoded profiles a packed workload keeps (a few hundred KB at most).
RECENT_PROFILES = 1024


@dataclass(frozen=True, eq=False)
class PackedProfiles(Mapping[str, Profile]):
    """The profiles of a packed workload by name, each decoded when it is read.

    Read in order (:meth:`items`, the ``SIMULATION_BEGINS`` payload) or by
    position (:meth:`at`); a lookup by name searches them all.
    """

    names: TextTable
    texts: TextTable
    source: str
    decode: Callable[[str], Any]
    #: One string object for each key and string value of the profiles read so far.
    _strings: dict[str, str] = field(default_factory=dict)
    #: The profiles read last, by position (at most :data:`RECENT_PROFILES`, the oldest
    #: dropped first): jobs that share a profile share its object, as in a loaded workload.
    _recent: dict[int, Profile] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.names)

    def __iter__(self) -> Iterator[str]:
        return (self.names[i] for i in range(len(self.names)))

    def at(self, index: int) -> Profile:
        """The profile at ``index`` in the file's order."""
        profile = self._recent.get(index)
        if profile is None:
            profile = self.decoded(index)
            recent = self._recent
            if len(recent) >= RECENT_PROFILES:
                del recent[next(iter(recent))]
            recent[index] = profile
        return profile

    def decoded(self, index: int) -> Profile:
        """The profile at ``index``, decoded from its text."""
        return parse_profile(self.names[index], self._shared(self.decode(self.texts[index])),
                             self.source)

    def _shared(self, raw: Any) -> Any:
        """``raw`` with its keys and string values shared by every profile.

        ``json.load`` of a whole file makes each key once; decoding profiles one
        by one makes ``"type"``, ``"cpu"``... again each time, and the copies
        of the ``SIMULATION_BEGINS`` payload would keep every one.
        """
        if not isinstance(raw, dict):
            return raw
        strings = self._strings
        return {strings.setdefault(key, key):
                strings.setdefault(value, value) if type(value) is str else value
                for key, value in raw.items()}

    def raw_items(self) -> Iterator[tuple[str, Any]]:
        """(name, the profile's JSON object) pairs in the file's order: the ``raw`` of
        :meth:`items`' profiles, without making (or keeping) the profiles."""
        return ((self.names[i], self._shared(self.decode(self.texts[i])))
                for i in range(len(self.names)))

    def items(self) -> Iterator[tuple[str, Profile]]:  # type: ignore[override]
        """(name, profile) pairs in the file's order, one decoded at a time."""
        return ((self.names[i], self.at(i)) for i in range(len(self.names)))

    def __getitem__(self, name: str) -> Profile:
        for i in range(len(self.names)):
            if self.names[i] == name:
                return self.at(i)
        raise KeyError(name)


@dataclass(frozen=True, eq=False)
class JobIds:
    """Job ids by position and back.

    JSON integer ids: ``first + position`` when consecutive (no table), else
    ``numbers`` and the ``order`` sorting them (a binary search). Otherwise the
    id strings (``texts``) and a dict of them.
    """

    count: int
    first: int | None = None
    numbers: np.ndarray | None = None
    order: np.ndarray | None = None
    texts: list[str] | None = None
    index: dict[str, int] | None = None

    def of(self, position: int) -> str:
        """The id string of the job at ``position``."""
        if self.first is not None:
            return str(self.first + position)
        if self.numbers is not None:
            return str(int(self.numbers[position]))
        assert self.texts is not None
        return self.texts[position]

    def position(self, job_id: str) -> int | None:
        """The position of the job ``job_id``, None when there is none."""
        if self.index is not None:
            return self.index.get(job_id)
        try:
            number = int(job_id)
        except ValueError:
            return None
        if str(number) != job_id:  # " 7", "07", "+7": not the string of an integer id
            return None
        if self.first is not None:
            at = number - self.first
            return at if 0 <= at < self.count else None
        assert self.numbers is not None and self.order is not None
        if not -(1 << 62) <= number < (1 << 62):
            return None
        at = int(np.searchsorted(self.numbers, number, sorter=self.order))
        if at < self.count and self.numbers[self.order[at]] == number:
            return int(self.order[at])
        return None


@dataclass(frozen=True, eq=False)
class PackedWorkload:
    """A validated workload kept as compressed texts and arrays (a :class:`JobSource`).

    ``nb_res`` and ``source`` are the loaded workload's; jobs keep the file's
    order (positions), :meth:`submission_order` gives Batsim's.
    """

    source: str
    nb_res: int | None
    jobs_text: TextTable
    subtimes: np.ndarray
    job_profiles: np.ndarray
    profiles: PackedProfiles
    ids: JobIds
    decode: Callable[[str], Any]

    def __len__(self) -> int:
        return len(self.subtimes)

    def index_of(self, job_id: str) -> int | None:
        return self.ids.position(job_id)

    def spec(self, index: int) -> JobSpec:
        return parse_job(self.decode(self.jobs_text[index]), index, _ANY_NAME, self.source)

    def id_of(self, index: int) -> str:
        return self.ids.of(index)

    def profile_of(self, index: int) -> Profile:
        return self.profiles.at(int(self.job_profiles[index]))

    def submission_order(self) -> Iterator[int]:
        return in_submission_order(self.subtimes, self.id_of)


class StoredTextDecoder:
    """``decoder.decode`` of a text the packer stored, without its Python wrapper.

    ``JSONDecoder.decode`` skips white space, runs the scanner from there
    (``raw_decode``) and checks that only white space follows. A stored text
    is one JSON value: when it starts with the value and the scanner ends at
    its end, the scanner's value is that of ``decode``; anything else goes
    through ``decode`` itself.
    """

    __slots__ = ("_decode", "_scan")

    def __init__(self, decoder: json.JSONDecoder) -> None:
        self._decode = decoder.decode
        self._scan = decoder.scan_once

    def __call__(self, text: str) -> Any:
        try:
            value, end = self._scan(text, 0)
        except StopIteration:
            return self._decode(text)
        return value if end == len(text) else self._decode(text)


class _AnyName:
    """Every name: a packed job's profile was checked when the file was read."""

    def __contains__(self, name: object) -> bool:
        return True


_ANY_NAME = _AnyName()


@dataclass
class _Packer:
    """Collects the validated jobs and profiles the stream reader hands over.

    A job's profile may come later in the file, so jobs keep the hash and the
    text of their profile's name until :meth:`packed` matches them (a sort,
    not a dict of every name).
    """

    source: str
    jobs: TextTableBuilder = field(default_factory=TextTableBuilder)
    subtimes: array = field(default_factory=lambda: array("d"))
    job_names: TextList = field(default_factory=TextList)
    job_hashes: array = field(default_factory=lambda: array("q"))
    names: TextList = field(default_factory=TextList)
    name_hashes: array = field(default_factory=lambda: array("q"))
    profiles: TextTableBuilder = field(default_factory=TextTableBuilder)
    #: Ids while every one is a JSON integer, else None and :attr:`id_index`.
    int_ids: array | None = field(default_factory=lambda: array("q"))
    id_index: dict[str, int] | None = None

    def add_profile(self, name: str, raw: Any, text: str) -> None:
        """A profile of the file (``raw`` decoded from ``text``), validated here."""
        parse_profile(name, raw, self.source)
        self.names.add(name)
        self.name_hashes.append(hash(name))
        self.profiles.add(text)

    def add_job(self, raw: Any, text: str) -> None:
        """A job of the file (``raw`` decoded from ``text``), validated here but for its
        profile's existence (checked in :meth:`packed`)."""
        index = len(self.subtimes)
        spec = parse_job(raw, index, _ANY_NAME, self.source)
        self._add_id(raw["id"], spec.id, index)
        self.jobs.add(text)
        self.subtimes.append(spec.subtime)
        self.job_names.add(spec.profile)
        self.job_hashes.append(hash(spec.profile))

    def _add_id(self, raw_id: Any, job_id: str, index: int) -> None:
        if self.int_ids is not None:
            if type(raw_id) is int and -(1 << 62) <= raw_id < (1 << 62):
                self.int_ids.append(raw_id)
                return
            self.id_index = {str(i): k for k, i in enumerate(self.int_ids)}
            self.int_ids = None
        assert self.id_index is not None
        if self.id_index.setdefault(job_id, index) != index:
            raise LeftToFullReader(f"job id {job_id!r} appears twice")

    def _job_profiles(self) -> np.ndarray:
        """Each job's profile position; LeftToFullReader when a name is missing or
        appears twice (or two names share a hash)."""
        hashes = np.array(self.name_hashes, dtype=np.int64)
        order = np.argsort(hashes, kind="stable")
        ordered = hashes[order]
        if len(ordered) > 1 and not np.all(np.diff(ordered)):
            raise LeftToFullReader("two profiles share a name (or its hash)")
        wanted = np.array(self.job_hashes, dtype=np.int64)
        if not len(wanted):
            return np.zeros(0, dtype=np.int64)
        at = np.minimum(np.searchsorted(ordered, wanted), max(len(ordered) - 1, 0))
        if not len(ordered) or not np.array_equal(ordered[at], wanted):
            raise LeftToFullReader("a job names a missing profile")
        found = order[at]
        names, job_names = self.names, self.job_names
        if any(names.raw(int(p)) != job_names.raw(j) for j, p in enumerate(found)):
            raise LeftToFullReader("a job names a missing profile")
        return found.astype(np.int64)

    def _ids(self) -> JobIds:
        """The ids; LeftToFullReader when one appears twice."""
        count = len(self.subtimes)
        if self.int_ids is None:
            assert self.id_index is not None
            return JobIds(count, texts=list(self.id_index), index=self.id_index)
        ids = np.array(self.int_ids, dtype=np.int64)
        if count and np.all(np.diff(ids) == 1):
            return JobIds(count, first=int(ids[0]))
        order = np.argsort(ids, kind="stable")
        if count > 1 and not np.all(np.diff(ids[order])):
            raise LeftToFullReader("a job id appears twice")
        return JobIds(count, numbers=ids, order=order)

    def packed(self, nb_res: int | None, decode: Callable[[str], Any]) -> PackedWorkload:
        """The workload read (LeftToFullReader: see :meth:`_job_profiles`, :meth:`_ids`)."""
        job_profiles = self._job_profiles()
        self.job_names = TextList()
        ids = self._ids()
        profiles = PackedProfiles(names=self.names.table(), texts=self.profiles.build(),
                                  source=self.source, decode=decode)
        return PackedWorkload(
            source=self.source, nb_res=nb_res, jobs_text=self.jobs.build(),
            subtimes=np.array(self.subtimes, dtype=np.float64), job_profiles=job_profiles,
            profiles=profiles, ids=ids, decode=decode)


def read_packed_workload(path: str | Path, *, parse_float: Callable[[str], float] = float
                         ) -> PackedWorkload | WorkloadJobs:
    """Load and validate a Batsim JSON workload as :func:`read_workload` does, kept packed.

    The file is read one job at a time; a file the stream reader does not
    take (malformed or invalid, a key given twice, an unusual layout) is read
    whole by :func:`read_workload`, which raises its error or, for a valid
    file, gives a :class:`WorkloadJobs`.
    """
    source = str(path)
    decoder = json.JSONDecoder(parse_float=parse_float)
    packer = _Packer(source)
    try:
        nb_res = stream_workload(path, decoder, job=packer.add_job, profile=packer.add_profile)
        return packer.packed(nb_res, StoredTextDecoder(decoder))
    except Exception:  # noqa: BLE001 -- the whole reader names the problem, or takes the file
        del packer
        return WorkloadJobs(read_workload(path, parse_float=parse_float))
