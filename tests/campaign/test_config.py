"""Bad campaign files are rejected with the file, line and key at fault."""

from __future__ import annotations

import re

import pytest

from snficon.campaign.config import read_campaign
from snficon.campaign.errors import CampaignFileError
from snficon.campaign.expand import expand
from snficon.campaign.locate import line_of

HEAD = """\
[platforms]
p4 = "inputs/p4.xml"
[workloads]
w8 = "inputs/w8.json"
"""

GROUP = """\
[[group]]
name = "g"
platforms = ["p4"]
workloads = ["w8"]
policies = ["snficon"]
"""


def rejected(write_campaign, text: str) -> CampaignFileError:
    path = write_campaign(text)
    with pytest.raises(CampaignFileError) as caught:
        expand(read_campaign(path))
    assert str(caught.value).startswith(str(path))
    return caught.value


def test_syntax_error_gives_line_and_column(write_campaign):
    error = rejected(write_campaign, HEAD + GROUP + "sweep = { alpha = [10, }\n")
    assert "TOML syntax error" in str(error) and "line 10" in str(error)


@pytest.mark.parametrize(("extra", "line", "key", "words"), [
    ('sweep = { alhpa = [10, 20] }\n', 10, 'group "g".sweep.alhpa', "unknown option"),
    ('options = { timeout = "long" }\n', 10, 'group "g".options.timeout', "is not a number"),
    ('sweep = { alpha = [] }\n', 10, 'group "g".sweep.alpha', "non-empty array"),
    ('sweep = { t_m = { start = 10, stop = 1, step = 1 } }\n', 10, 'group "g".sweep.t_m',
     "start <= stop"),
    ('options = { platform = "x.xml" }\n', 10, 'group "g".options.platform', "set by the"),
    ('colour = "blue"\n', 10, 'group "g".colour', "unknown key 'colour'"),
    ('options = { alpha = 1 }\nsweep = { alpha = [2] }\n', 11, 'group "g".sweep.alpha',
     "both fixed"),
])
def test_semantic_errors_name_key_and_line(write_campaign, extra, line, key, words):
    error = rejected(write_campaign, HEAD + GROUP + extra)
    assert error.key == key
    assert error.line == line
    assert words in str(error)
    assert f"line {line}, {key}:" in str(error)


def test_unknown_policy(write_campaign):
    error = rejected(write_campaign, HEAD + GROUP.replace('"snficon"', '"snficon", "sjf"'))
    assert error.key == 'group "g".policies[1]' and error.line == 9
    assert "unknown policy 'sjf'" in str(error) and "fcfsbIpm" in str(error)


def test_unknown_workload_label(write_campaign):
    error = rejected(write_campaign, HEAD + GROUP.replace('["w8"]', '["w9"]'))
    assert error.key == 'group "g".workloads' and error.line == 8
    assert "unknown workload 'w9'" in str(error)


def test_bad_case_pair(write_campaign):
    text = HEAD + '[[group]]\nname = "c"\npolicies = ["snficon"]\ncases = [\n  ["p4", "w8"],\n' \
        '  ["p4"],\n]\n'
    error = rejected(write_campaign, text)
    assert error.key == 'group "c".cases[1]' and error.line == 8


def test_bad_jobs_and_missing_group(write_campaign):
    error = rejected(write_campaign, HEAD.replace('"inputs/w8.json"',
                                                  '{ file = "inputs/w8.json", jobs = 0 }'))
    assert error.key == "workloads.w8.jobs" and error.line == 4
    error = rejected(write_campaign, HEAD)
    assert error.key == "group" and "at least one [[group]]" in str(error)


def test_duplicate_group_name(write_campaign):
    error = rejected(write_campaign, HEAD + GROUP + GROUP)
    assert error.key == 'group "g".name' and error.line == 11  # the second group's name


def test_option_of_another_policy(write_campaign):
    text = HEAD + GROUP.replace('["snficon"]', '["snficon", "snfIpm"]') \
        + "sweep = { alpha = [10] }\n"
    error = rejected(write_campaign, text)
    assert "policy snfIpm" in str(error) and "known: request_end_calls, timeout" in str(error)


def test_missing_campaign_file(tmp_path):
    with pytest.raises(CampaignFileError, match="campaign file not found"):
        read_campaign(tmp_path / "nope.toml")


def test_line_of_nested_tables():
    text = 'a = 1\n[[group]]\nname = "x"\n[group.sweep]\nalpha = [\n  1,\n]\n[[group]]\n' \
        'name = "y"\n'
    assert line_of(text, ("group", 0, "sweep", "alpha")) == 5
    assert line_of(text, ("group", 1, "name")) == 9
    assert line_of(text, ("group", 1, "sweep")) == 8  # not written: the group's header
    assert line_of(text, ("b",)) is None
    assert re.fullmatch(r"\d+", str(line_of(text, ("a",))))
