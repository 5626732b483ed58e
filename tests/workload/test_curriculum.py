"""The RL curriculum workloads (snficon.workload.curriculum, ``snficon workload curriculum``)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from snficon.errors import InputError
from snficon.workload.curriculum import (
    STAGES,
    kde_sample,
    segment_from_workload,
    write_curriculum,
)
from snficon.workload.reader import read_workload
from snficon.workload.swf import read_swf
from snficon.workload.trace import TraceJob
from snficon.workload.writer import write_batsim_workload


def runtimes_of(path):
    workload = read_workload(path)
    return [workload.profiles[j.profile].cpu_flops / 1e9 for j in workload.jobs]


def lognormal_segment(path, n=2000, seed=7):
    """A segment with lognormal gaps and runtimes (not exponential), sizes 1..8."""
    rng = np.random.default_rng(seed)
    gaps = np.rint(rng.lognormal(6.0, 1.5, n))
    runtimes = np.rint(rng.lognormal(7.0, 1.0, n))
    sizes = rng.integers(1, 9, n)
    subtimes = np.cumsum(gaps)
    jobs = [TraceJob(id=i + 1, res=int(sizes[i]), subtime=float(subtimes[i]),
                     runtime=float(runtimes[i]), reqtime=float(100 * (i % 7 + 1)))
            for i in range(n)]
    write_batsim_workload(path, jobs, 16)
    return path


class TestAuthorsCurriculum:
    def test_das2_fs1_segment_reproduces_the_published_files(self, das2_fs1_swf, tmp_path):
        segment = tmp_path / "fs1-3001-4000.json"
        write_batsim_workload(segment, read_swf(das2_fs1_swf, skip=3000, max_jobs=1000).jobs,
                              64)
        write_curriculum(segment, tmp_path / "cur", seed=42)
        # Reference numbers: the paper authors' DAS2-fs1-3001-4000_simple.json and
        # _complex.json (SPARS-ICON repository, workloads/curriculum-small/, made by their
        # BuildCurriculum.py with seed 42), read with json: last subtime, sums of subtime
        # and runtime, and the first three (subtime, runtime) pairs.
        published = {
            "simple": (1950562, 970919744, 1755008, [(1843, 1056), (5321, 354), (6191, 268)]),
            "complex": (3454253, 2309933668, 2161182, [(4, 12777), (5, 24), (294, 1384)]),
        }
        template = read_workload(segment).jobs
        for stage, (last, subtime_sum, runtime_sum, first) in published.items():
            path = tmp_path / "cur" / f"{stage}.json"
            jobs, runtimes = read_workload(path).jobs, runtimes_of(path)
            assert jobs[-1].subtime == last
            assert sum(j.subtime for j in jobs) == subtime_sum
            assert sum(runtimes) == runtime_sum
            assert [(j.subtime, r) for j, r in zip(jobs[:3], runtimes[:3], strict=True)] == first
            # sizes and requested times are the segment's, job by job
            assert [(j.res, j.reqtime) for j in jobs] == [(j.res, j.reqtime) for j in template]


class TestStages:
    def test_files_and_order(self, tmp_path):
        segment = lognormal_segment(tmp_path / "seg.json", n=300)
        report = write_curriculum(segment, tmp_path / "cur", seed=3)
        assert (tmp_path / "cur" / "real.json").read_bytes() == segment.read_bytes()
        summary = json.loads((tmp_path / "cur" / "curriculum.json").read_text())
        assert [s["stage"] for s in summary["stages"]] == list(STAGES)
        assert summary["seed"] == 3
        for stage in ("simple", "complex"):
            workload = read_workload(tmp_path / "cur" / f"{stage}.json")
            assert workload.nb_res == 16
            assert [j.id for j in workload.jobs] == [str(i) for i in range(1, 301)]
            subtimes = [j.subtime for j in workload.jobs]
            assert subtimes == sorted(subtimes) and all(t == int(t) for t in subtimes)
            assert all(r >= 0 and r == int(r) for r in runtimes_of(tmp_path / "cur" /
                                                                    f"{stage}.json"))
        assert report.stats["real"].jobs == 300

    def test_same_seed_same_bytes_other_seed_other_draws(self, tmp_path):
        segment = lognormal_segment(tmp_path / "seg.json", n=300)
        for name, seed in (("a", 11), ("b", 11), ("c", 12)):
            write_curriculum(segment, tmp_path / name, seed=seed)
        for stage in ("simple", "complex"):
            a, b, c = ((tmp_path / n / f"{stage}.json").read_bytes() for n in "abc")
            assert a == b
            assert a != c

    def test_simple_is_exponential_with_the_segment_means(self, tmp_path):
        segment = lognormal_segment(tmp_path / "seg.json", n=4000)
        report = write_curriculum(segment, tmp_path / "cur", seed=5)
        real, simple = report.stats["real"], report.stats["simple"]
        # the mean of 4000 exponential draws has a relative standard error of 1/sqrt(4000)
        tolerance = 4 / np.sqrt(4000)
        assert simple.mean_interarrival_s == pytest.approx(real.mean_interarrival_s,
                                                           rel=tolerance)
        assert simple.mean_runtime_s == pytest.approx(real.mean_runtime_s, rel=tolerance)
        runtimes = np.array(runtimes_of(tmp_path / "cur" / "simple.json"))
        # rounded exponential draws: a KS test against the exponential law accepts them,
        # while the lognormal segment's runtimes are rejected by the same test
        scale = runtimes.mean()
        assert stats.kstest(runtimes, "expon", args=(0, scale)).pvalue > 0.01
        source = np.array(runtimes_of(segment))
        assert stats.kstest(source, "expon", args=(0, source.mean())).pvalue < 1e-6

    def test_complex_follows_the_segment_distribution(self, tmp_path):
        segment = lognormal_segment(tmp_path / "seg.json", n=2000)
        write_curriculum(segment, tmp_path / "cur", seed=9)
        source = np.log1p(runtimes_of(segment))
        drawn = np.log1p(runtimes_of(tmp_path / "cur" / "complex.json"))
        # a KDE with Scott's bandwidth widens the law a little; two-sample KS still accepts
        assert stats.ks_2samp(source, drawn).pvalue > 0.01
        # the interarrival gaps too; the exponential gaps of the simple stage are rejected
        def gaps(name):
            return np.log1p(np.diff([0.0] + [j.subtime for j in read_workload(name).jobs]))
        assert stats.ks_2samp(gaps(segment), gaps(tmp_path / "cur" / "complex.json")).pvalue \
            > 0.01
        assert stats.ks_2samp(gaps(segment), gaps(tmp_path / "cur" / "simple.json")).pvalue \
            < 1e-6


class TestKdeSample:
    def test_draws_are_non_negative(self):
        values = np.array([0.0, 0.0, 1.0, 2.0, 3.0, 0.0, 50.0])
        drawn = kde_sample(values, 5000, np.random.default_rng(1))
        assert len(drawn) == 5000 and drawn.min() >= 0 and np.isfinite(drawn).all()

    def test_constant_values_are_resampled(self):
        drawn = kde_sample(np.full(10, 7.0), 20, np.random.default_rng(1))
        assert (drawn == 7.0).all()

    def test_single_value(self):
        assert list(kde_sample(np.array([3.0]), 4, np.random.default_rng(0))) == [3.0] * 4


class TestErrors:
    def test_empty_segment(self, tmp_path):
        path = tmp_path / "empty.json"
        path.write_text('{"nb_res": 4, "jobs": [], "profiles": {}}')
        with pytest.raises(InputError, match="empty.json: the segment has no job"):
            write_curriculum(path, tmp_path / "cur")
        assert not (tmp_path / "cur").exists()

    def test_all_jobs_at_time_zero(self, tmp_path):
        path = tmp_path / "burst.json"
        write_batsim_workload(path, [TraceJob(i, 1, 0, 5, 5) for i in range(1, 4)], 4)
        with pytest.raises(InputError, match="mean interarrival time is 0.0 s"):
            segment_from_workload(read_workload(path))

    def test_bad_seed(self, tmp_path):
        segment = lognormal_segment(tmp_path / "seg.json", n=10)
        with pytest.raises(InputError, match="--seed must be a non-negative integer"):
            write_curriculum(segment, tmp_path / "cur", seed=-1)

    def test_command(self, cli_main, tmp_path, capsys):
        segment = lognormal_segment(tmp_path / "seg.json", n=50)
        out = tmp_path / "cur"
        assert cli_main(["workload", "curriculum", str(segment), "-o", str(out),
                         "--seed", "4"]) == 0
        assert sorted(p.name for p in out.iterdir()) == ["complex.json", "curriculum.json",
                                                         "real.json", "simple.json"]
        printed = capsys.readouterr().out
        assert "seed: 4" in printed and "simple: " in printed

    def test_command_missing_segment(self, cli_main, tmp_path, capsys):
        assert cli_main(["workload", "curriculum", str(tmp_path / "none.json"), "-o",
                         str(tmp_path / "cur")]) == 2
        assert "none.json: workload file not found" in capsys.readouterr().err
