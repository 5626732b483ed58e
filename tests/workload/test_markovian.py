"""The paper's Markovian generator (snficon/workload/markovian.py, SPEC section 4)."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

from snficon.errors import InputError
from snficon.workload.markovian import (
    MarkovianParams,
    generate_markovian,
    mean_capped_geometric,
    mean_truncated_geometric,
)
from snficon.workload.reader import read_workload


class TestMeans:
    def test_capped_mean_is_expectation_of_min(self):
        # E[min(X, 64)] summed term by term: sum_{k<64} k pmf(k) + 64 P(X >= 64).
        k = np.arange(1, 64)
        direct = (k * stats.geom.pmf(k, 0.35)).sum() + 64 * stats.geom.sf(63, 0.35)
        assert mean_capped_geometric(0.35, 64) == pytest.approx(direct, rel=1e-14)

    def test_truncated_mean_is_conditional_expectation(self):
        expected = stats.geom(0.35).expect(lb=1, ub=64, conditional=True)
        assert mean_truncated_geometric(0.35, 64) == pytest.approx(expected, rel=1e-14)

    def test_the_two_means_differ_by_about_2e_11(self):
        capped, truncated = mean_capped_geometric(0.35, 64), mean_truncated_geometric(0.35, 64)
        assert 1e-11 < (capped - truncated) / capped < 3e-11

    def test_default_mean_interarrival(self):
        # m = E[r] * 7200 / (64 * 0.4) with E[r] = (1 - 0.65**64) / 0.35 (SPEC section 4).
        assert MarkovianParams().mean_interarrival_s == pytest.approx(
            (1 - 0.65**64) / 0.35 * 7200 / 25.6, rel=1e-15)


class TestPaperFile:
    @pytest.fixture
    def paper_jobs(self, paper_markovian):
        return json.loads(paper_markovian.read_text())["jobs"]

    def test_defaults_reproduce_paper_file(self, paper_jobs):
        jobs = generate_markovian()
        assert len(jobs) == len(paper_jobs) == 3000
        assert [j.id for j in jobs] == [p["job_id"] for p in paper_jobs]
        assert [j.res for j in jobs] == [p["res"] for p in paper_jobs]
        assert [j.runtime for j in jobs] == [p["runtime"] for p in paper_jobs]
        assert [j.reqtime for j in jobs] == [p["reqtime"] for p in paper_jobs]
        ours = np.array([j.subtime for j in jobs])
        theirs = np.array([p["subtime"] for p in paper_jobs])
        assert np.max(np.abs(ours / theirs - 1)) < 1e-9

    def test_truncated_mean_reproduces_subtimes_bit_for_bit(self, paper_jobs):
        jobs = generate_markovian(MarkovianParams(res_mean="truncated"))
        assert [j.subtime for j in jobs] == [p["subtime"] for p in paper_jobs]


class TestGenerator:
    def test_small_workload_shape(self):
        params = MarkovianParams(seed=1, n_jobs=200, cap=4, nodes=8)
        jobs = generate_markovian(params)
        assert [j.id for j in jobs] == list(range(1, 201))
        assert all(1 <= j.res <= 4 for j in jobs)
        subtimes = [j.subtime for j in jobs]
        assert subtimes == sorted(subtimes) and subtimes[0] > 0

    def test_same_seed_same_jobs(self):
        params = MarkovianParams(n_jobs=50)
        assert generate_markovian(params) == generate_markovian(params)
        assert generate_markovian(params) != generate_markovian(replace(params, seed=44))

    @pytest.mark.parametrize("field, value", [
        ("n_jobs", 0), ("load", 0.0), ("nodes", 0), ("mean_runtime_s", -1.0),
        ("mean_reqtime_s", 0.0), ("p", 0.0), ("p", 1.5), ("cap", 0), ("res_mean", "mean")])
    def test_bad_parameter(self, field, value):
        with pytest.raises(InputError, match=field):
            MarkovianParams(**{field: value})


class TestCommand:
    def test_markovian_command_writes_loadable_workload(self, cli_main, tmp_path, capsys):
        out = tmp_path / "m.json"
        assert cli_main(["workload", "markovian", "--jobs", "40", "--seed", "7",
                         "-o", str(out)]) == 0
        workload = read_workload(out)
        assert len(workload.jobs) == 40 and workload.nb_res == 64
        assert all(job.walltime == -1 for job in workload.jobs)
        assert "jobs written: 40" in capsys.readouterr().out

    def test_default_command_matches_library(self, cli_main, tmp_path):
        out = tmp_path / "m.json"
        assert cli_main(["workload", "markovian", "--walltime", "kill", "-o", str(out)]) == 0
        loaded = read_workload(out)
        generated = generate_markovian()
        assert [(j.id, j.subtime, j.reqtime, j.walltime) for j in loaded.jobs] == [
            (str(g.id), g.subtime, g.reqtime, g.reqtime) for g in generated]

    def test_delay_without_min_runtime_is_an_input_error(self, cli_main, tmp_path, capsys):
        out = tmp_path / "m.json"
        assert cli_main(["workload", "markovian", "--profile", "delay", "-o", str(out)]) == 2
        assert "--min-runtime" in capsys.readouterr().err
        assert not out.exists()
