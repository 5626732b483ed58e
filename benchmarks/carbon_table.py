"""The per-method table of a carbon campaign (expe/carbon.toml): carbon, added wait, slot load,
idealised vs realised, and the advisor's solver effort.

For each case and scheduler, each method's means over the start alignments
(:func:`snficon.report.carbon.method_table`): cluster carbon (t CO2) and its
change vs Observed (%), the added mean wait (h), the realised peak 30-min slot
load (nodes) and its change, the load variance; and what the advisor's plan
promised (every job at its target, the jobs' compute carbon): carbon change,
added wait, peak change. Then the solver effort over the runs with a COAST
layer (median of each run's median solve time per micro-batch, mean sweeps).
Run by hand after the campaign:

    uv run python benchmarks/carbon_table.py out/carbon [--csv table.csv]
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from snficon.report.carbon import method_table, paired_rows
from snficon.report.data import load_results

COLUMNS = {"case": "case", "label": "scheduler", "method": "method", "alignments": "n",
           "carbon_t": "carbon t", "carbon_change_pct": "carbon %", "added_wait_h": "+wait h",
           "peak_slot_load": "peak", "peak_change_pct": "peak %", "load_variance": "load var",
           "job_carbon_change_pct": "job carbon %", "ideal_carbon_change_pct": "ideal carbon %",
           "ideal_added_wait_h": "ideal +wait h",
           "ideal_peak_change_pct": "ideal peak %"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", help="a campaign's results folder")
    parser.add_argument("--csv", help="also write the table here")
    args = parser.parse_args()
    frame = load_results(args.results)
    table = method_table(frame)
    shown = table[list(COLUMNS)].rename(columns=COLUMNS)
    with pd.option_context("display.width", 200, "display.max_columns", 20,
                           "display.max_rows", 500):
        print(shown.round(2).to_string(index=False))
    if args.csv:
        shown.to_csv(args.csv, index=False)
    rows = paired_rows(frame)
    coast = rows[(rows["method"] == "COAST") & rows["coast_batches"].notna()]
    for case, group in coast.groupby("case"):
        print(f"solver on {case}: {len(group)} runs, {group['coast_batches'].mean():.0f} "
              f"non-empty batches per run; median solve per batch "
              f"{1e3 * float(np.median(group['coast_solve_median_s'])):.3f} ms (median of the "
              f"runs' medians), mean sweeps {group['coast_sweeps_mean'].mean():.3f}")


if __name__ == "__main__":
    main()
