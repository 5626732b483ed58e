"""COAST's solver effort: median solve time per micro-batch and mean sweep count.

Replays whole workloads through the advisor under COAST's idealised model
(every job starts at its target) and reports, per case, the non-empty
micro-batches, their mean and largest size, the median and 90th percentile
of the time to build and solve a batch's game, the mean number of
best-response sweeps and the share of batches stable after one sweep (the
paper: median 0.07 ms, mean 1.02 sweeps, 98 % in one sweep, on CEA-Curie).
It also prints the plan's idealised metrics for each method (carbon vs
Observed, mean added wait, peak slot load, load variance).

Cases: the Markovian workload / AOBA-64 (the project's file) and, from
../shared, DAS2 fs1-fs4 / AOBA-64 and SDSC Blue / AOBA-1152 (the paper's
SPARS inputs, converted on the fly). Half the jobs are made flexible with a
24 h maximum delay (``snficon workload flex``, seed 1); energy = nodes x busy
power (2100 W) x requested time; the signal is GB 2023 from 2023-03-01
(../shared; else a synthetic one); the normalisers are frozen on the first
20 % of the jobs. Run by hand (timings are wall-clock and noisy on a shared
machine: repeat):

    uv run python benchmarks/coast_bench.py [--repeat 3] [--gamma 5e-4 1 5] [--cases das2-fs1]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np

from snficon.carbon.coast import METHODS, Advisor, CoastParams, FlexJob
from snficon.carbon.evaluate import freeze_normalisers, plan_metrics, plan_workload
from snficon.carbon.mapping import MappedSignal, map_signal
from snficon.carbon.synthetic import DiurnalParams, synthetic_diurnal
from snficon.workload.convert import convert_trace
from snficon.workload.flex import FlexParams, assign_flexibility

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"
BUSY_W = 2100.0  # AOBA's busy power (W)
CASES = {
    "markovian": REPO / "workloads" / "markovian-3000.json",
    "das2-fs1": SHARED / "paper-inputs" / "DAS2-fs1-0-3000.json",
    "das2-fs2": SHARED / "paper-inputs" / "DAS2-fs2-0-3000.json",
    "das2-fs3": SHARED / "paper-inputs" / "DAS2-fs3-0-3000.json",
    "das2-fs4": SHARED / "paper-inputs" / "DAS2-fs4-0-3000.json",
    "sdsc-blue": SHARED / "paper-inputs" / "SDSC-BLUE-2000-4.2-cln-0-3000.json",
}


def flex_jobs(source: Path, work: Path) -> list[FlexJob]:
    """The workload's jobs with half of them flexible (24 h), as the advisor models them."""
    if source.parent != REPO / "workloads":
        source = convert_trace(source, work / f"{source.stem}.batsim.json").output
    document = json.loads(Path(source).read_text(encoding="utf-8"))
    flexed, _ = assign_flexibility(document, FlexParams(share=0.5, max_delay_s=86400, seed=1))
    return [FlexJob.from_fields(str(j["id"]), j["subtime"], j["res"],
                                j.get("reqtime", j.get("walltime", 0)), j, BUSY_W)
            for j in flexed["jobs"]]


def carbon_signal() -> MappedSignal:
    gb = SHARED / "carbon" / "gb-neso-national-2023.csv"
    if gb.is_file():
        return map_signal(gb, "2023-03-01T00:00Z")
    print("(GB 2023 signal absent: a synthetic signal instead)")
    synthetic = synthetic_diurnal(DiurnalParams(days=365, start="2023-01-01T00:00Z", seed=1))
    return MappedSignal(synthetic, synthetic.first_s + 59 * 86400)


def run_case(name: str, jobs: list[FlexJob], signal: MappedSignal, gammas: list[float],
             repeat: int) -> None:
    grid = CoastParams().grid
    training = jobs[: max(1, len(jobs) // 5)]
    norms = freeze_normalisers(training, signal, grid)
    print(f"\n== {name}: {len(jobs)} jobs, {sum(j.flexible for j in jobs)} flexible; "
          f"normalisers: carbon {norms.carbon_kg:.3g} kg, load {norms.load:.3g} nodes, "
          f"wait {norms.wait_s:g} s")
    observed = None
    for method in METHODS:
        for gamma in (gammas if method == "coast" else [gammas[0]]):
            medians, sweeps, one, sizes = [], [], [], []
            for _ in range(repeat):
                advisor = Advisor(CoastParams(method=method, gamma=gamma), signal, norms)
                starts = plan_workload(jobs, advisor)
                times = np.array([r.solve_s for r in advisor.results])
                medians.append(float(np.median(times)) if times.size else float("nan"))
                p90 = float(np.percentile(times, 90)) if times.size else float("nan")
                sweeps = [r.sweeps for r in advisor.results]
                sizes = [len(r.job_ids) for r in advisor.results]
                one = [s == 1 for s in sweeps]
            m = plan_metrics(jobs, starts, signal, grid)
            if method == "observed":
                observed = m
            label = f"{method}" + (f" gamma={gamma:g}" if method == "coast" else "")
            change = 100 * (m.carbon_kg / observed.carbon_kg - 1)
            print(f"  {label:<22} carbon {m.carbon_kg / 1e3:8.2f} t ({change:+6.1f} %)  "
                  f"added wait {m.mean_added_wait_s / 3600:5.2f} h  peak {m.peak_slot_load:6.0f} "
                  f"(obs {observed.peak_slot_load:.0f})  var {m.load_variance:9.0f}")
            if sizes:
                shown = " ".join(f"{1e3 * x:.3f}" for x in medians)
                effort = (f"; sweeps mean {np.mean(sweeps):.3f}, {100 * np.mean(one):.1f} % "
                          "in one" if method == "coast" else "")
                print(f"  {'':<22} {len(sizes)} non-empty batches, {np.mean(sizes):.2f} jobs "
                      f"mean, {max(sizes)} max; solve median {shown} ms (each repeat), p90 "
                      f"{1e3 * p90:.3f} ms{effort}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--gamma", type=float, nargs="+", default=[5e-4, 1.0, 5.0])
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    args = parser.parse_args()
    signal = carbon_signal()
    with tempfile.TemporaryDirectory(prefix="snficon-coast-") as folder:
        for name in args.cases:
            if not CASES[name].is_file():
                print(f"\n== {name}: {CASES[name]} is absent (../shared), skipped")
                continue
            run_case(name, flex_jobs(CASES[name], Path(folder)), signal, args.gamma,
                     args.repeat)


if __name__ == "__main__":
    main()
