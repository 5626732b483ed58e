"""The packed workload (snficon/workload/packed.py, stream.py) equals the loaded one."""

from __future__ import annotations

import json

import pytest

from snficon.engine.wire import rapidjson_double
from snficon.errors import InputError, SnficonError
from snficon.workload import stream
from snficon.workload.packed import PackedWorkload, WorkloadJobs, read_packed_workload
from snficon.workload.reader import read_workload

PROFILES = {"p1": {"type": "parallel_homogeneous", "cpu": 1.2345678901234567e9, "com": 0},
            "d1": {"type": "delay", "delay": 5, "extra": "kept"}}


def jobs(ids):
    """Jobs with repeated subtimes, shared and unshared profiles, and an extra field."""
    return [{"id": job_id, "subtime": [3.0, 1.5, 3.0, 0.1][k % 4], "res": 1 + k % 3,
             "profile": "p1" if k % 2 else "d1", "walltime": -1, "reqtime": 20.5,
             **({"note": "é ünïcode"} if k == 2 else {})}
            for k, job_id in enumerate(ids)]


def write(tmp_path, document, indent=None):
    path = tmp_path / "w.json"
    path.write_text(json.dumps(document, indent=indent, ensure_ascii=False))
    return path


def assert_same(path):
    """The packed workload reads as :func:`read_workload` reads the file."""
    full = read_workload(path, parse_float=rapidjson_double)
    packed = read_packed_workload(path, parse_float=rapidjson_double)
    assert isinstance(packed, PackedWorkload)
    assert len(packed) == len(full.jobs) and packed.nb_res == full.nb_res
    by_id = {spec.id: spec for spec in full.jobs}
    for index in range(len(packed)):
        spec = packed.spec(index)
        assert spec == by_id[spec.id] and list(spec.raw.items()) == list(by_id[spec.id].raw.items())
        assert packed.id_of(index) == spec.id and packed.index_of(spec.id) == index
        profile, expected = packed.profile_of(index), full.profiles[spec.profile]
        assert profile == expected and profile.raw == expected.raw
    assert [(name, p, p.raw) for name, p in packed.profiles.items()] == \
        [(name, p, p.raw) for name, p in full.profiles.items()]
    assert [packed.id_of(i) for i in packed.submission_order()] == \
        [spec.id for spec in sorted(full.jobs, key=lambda spec: (spec.subtime, spec.id))]
    return packed


@pytest.mark.parametrize("ids", [
    list(range(1, 41)),                        # consecutive integers: no id table
    [10, 9, 2, 100, 3, 77, 1 << 40, -5],       # integers in any order
    ["a", "b10", "b9", "x!", "7", "07"],       # strings
    [1, 2, "three", 4],                        # mixed
])
def test_packed_jobs_and_profiles_equal_the_loaded_ones(tmp_path, ids):
    packed = assert_same(write(tmp_path, {"nb_res": 8, "jobs": jobs(ids), "profiles": PROFILES}))
    assert packed.index_of("nope") is None and packed.index_of(" 1") is None


def test_profiles_before_jobs_other_keys_and_layout(tmp_path):
    document = {"description": {"nested": [1, 2, {"a": None}]}, "profiles": PROFILES,
                "jobs": jobs(range(5))}
    assert_same(write(tmp_path, document, indent=3))


def test_values_cut_at_a_chunk_boundary_read_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(stream, "CHUNK_CHARS", 7)
    assert_same(write(tmp_path, {"nb_res": 1152, "jobs": jobs(range(1, 30)),
                                 "profiles": PROFILES}))


def test_unknown_ids_and_the_integer_string(tmp_path):
    packed = assert_same(write(tmp_path, {"jobs": jobs([5, 6, 7]), "profiles": PROFILES}))
    assert [packed.index_of(text) for text in ("5", "7", "8", "4", "05", "+5", "5.0")] == \
        [0, 2, None, None, None, None, None]


@pytest.mark.parametrize("document", [
    {"jobs": jobs([1, 1]), "profiles": PROFILES},                     # id twice
    {"jobs": jobs([1, "1"]), "profiles": PROFILES},                   # same id string
    {"jobs": [{**jobs([1])[0], "profile": "p9"}], "profiles": PROFILES},
    {"jobs": jobs([1]), "profiles": {"p1": {"type": "delay", "delay": 0}}},
    {"jobs": jobs([1]), "profiles": {**PROFILES, "d1": {"type": "msg_par"}}},
    {"jobs": [{**jobs([1])[0], "res": 0}], "profiles": PROFILES},
    {"jobs": jobs([1]), "profiles": PROFILES, "nb_res": 0},
    {"jobs": jobs([1])},
    {"jobs": {}, "profiles": PROFILES},
    [],
])
def test_an_invalid_file_raises_the_error_of_the_whole_reader(tmp_path, document):
    path = write(tmp_path, document)
    with pytest.raises(SnficonError) as whole:
        read_workload(path)
    with pytest.raises(type(whole.value)) as packed:
        read_packed_workload(path)
    assert str(packed.value) == str(whole.value)


@pytest.mark.parametrize("text", ['{"nb_res": 4,\n "jobs": [}\n', '{"jobs": [], "profiles": {}} x',
                                  '{"jobs": [1,], "profiles": {}}'])
def test_malformed_json_raises_the_whole_readers_error(tmp_path, text):
    path = tmp_path / "w.json"
    path.write_text(text)
    with pytest.raises(InputError) as whole:
        read_workload(path)
    with pytest.raises(InputError) as packed:
        read_packed_workload(path)
    assert str(packed.value) == str(whole.value)


def test_a_key_given_twice_is_read_whole_as_json_load_reads_it(tmp_path):
    path = tmp_path / "w.json"
    path.write_text('{"jobs": [], "profiles": {"p1": {"type": "delay", "delay": 1}},'
                    ' "jobs": ' + json.dumps(jobs([1, 2])) + ', "profiles": '
                    + json.dumps(PROFILES) + '}')
    loaded = read_packed_workload(path)
    assert isinstance(loaded, WorkloadJobs) and len(loaded) == 2
    assert loaded.spec(0) == read_workload(path).jobs[0]


def test_a_profile_given_twice_is_read_whole(tmp_path):
    path = tmp_path / "w.json"
    path.write_text('{"jobs": ' + json.dumps(jobs([1])) + ', "profiles": {"d1": '
                    '{"type": "delay", "delay": 1}, "d1": {"type": "delay", "delay": 2}}}')
    loaded = read_packed_workload(path)
    assert isinstance(loaded, WorkloadJobs) and loaded.profile_of(0).delay_s == 2
