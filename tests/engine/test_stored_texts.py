"""The engine's readers of stored job texts give what the general readers give."""

from __future__ import annotations

import json

import numpy as np
import pytest

from snficon.engine.wire import rapidjson_double
from snficon.workload.packed import (
    RECENT_PROFILES,
    PackedWorkload,
    StoredTextDecoder,
    read_packed_workload,
)
from snficon.workload.texttable import BLOCK_TEXTS, TextTableBuilder

TEXTS = ['{"id":1,"subtime":0.1,"res":2}', ' {"id": 2} ', '{"a":"é"}  ', '[1, 2.5e3]', "7",
         '{"cpu":1234567.890123456789e3,"com":0}', '"x"', '{"k":[{"n":null}]}\n', "  3.25"]


@pytest.mark.parametrize("text", TEXTS)
def test_stored_text_decoder_is_decode(text):
    decoder = json.JSONDecoder(parse_float=rapidjson_double)
    assert StoredTextDecoder(decoder)(text) == decoder.decode(text)


@pytest.mark.parametrize("text", ['{"a":1} x', "", "  ", "{", '{"a":1}{"b":2}'])
def test_stored_text_decoder_raises_as_decode(text):
    decoder = json.JSONDecoder()
    with pytest.raises(json.JSONDecodeError):
        decoder.decode(text)
    with pytest.raises(json.JSONDecodeError):
        StoredTextDecoder(decoder)(text)


def test_text_table_reads_every_text_in_any_order():
    rng = np.random.default_rng(0)
    texts = ["".join(rng.choice(list("ab{}é\"0"), rng.integers(0, 9))) for _ in range(200)]
    builder = TextTableBuilder()
    for text in texts:
        builder.add(text)
    table = builder.build()
    order = [*range(len(texts)), *rng.permutation(len(texts)).tolist()]
    assert [table[i] for i in order] == [texts[i] for i in order]
    assert len(table) == len(texts) > 3 * BLOCK_TEXTS


def test_packed_profiles_read_again_are_those_decoded(tmp_path):
    rng = np.random.default_rng(1)
    count = RECENT_PROFILES + 300
    profiles = {f"p{i}": {"type": "parallel_homogeneous", "cpu": float(rng.uniform(0, 1e12)),
                          "com": 0, "note": f"n{i % 7}"} for i in range(count)}
    jobs = [{"id": i, "subtime": float(i), "res": 1, "profile": f"p{int(k)}", "walltime": -1}
            for i, k in enumerate(rng.integers(0, count, 3 * count))]
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"nb_res": 4, "jobs": jobs, "profiles": profiles}))
    packed = read_packed_workload(path, parse_float=rapidjson_double)
    assert isinstance(packed, PackedWorkload)
    for index in [*rng.integers(0, len(packed), 4 * count).tolist(), *range(len(packed))]:
        profile = packed.profile_of(index)
        fresh = packed.profiles.decoded(int(packed.job_profiles[index]))
        assert profile == fresh and profile.raw == fresh.raw
        assert profile.name == jobs[index]["profile"]
    assert len(packed.profiles._recent) == RECENT_PROFILES


def test_packed_profile_objects_are_those_of_the_profiles(tmp_path):
    profiles = {f"p{i}": {"type": "delay", "delay": 1.5 + i, "extra": [i, "x"]} for i in range(70)}
    jobs = [{"id": 0, "subtime": 0.0, "res": 1, "profile": "p3", "walltime": -1}]
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"nb_res": 4, "jobs": jobs, "profiles": profiles}))
    packed = read_packed_workload(path, parse_float=rapidjson_double)
    assert isinstance(packed, PackedWorkload)
    objects = list(packed.profiles.raw_items())
    assert objects == [(name, profile.raw) for name, profile in packed.profiles.items()]
    assert objects == list(profiles.items())
