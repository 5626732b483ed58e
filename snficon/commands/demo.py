"""``snficon demo``: FCFS/B+IPM, SNF+IPM and SNF-ICON on the Markovian workload, with a report.

Makes the inputs if they are missing (the Markovian 3000 workload and the
AOBA-64 platform, with the project's generators), runs the three policies in
parallel through the campaign runner (``DIR/results``; a second call reuses
the finished runs), prints a comparison table and writes the report in DIR.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from snficon.commands.limits import MAX_JOBS, MAX_WORKERS, check_count
from snficon.fileio import check_output_file, check_output_folder

DEFAULT_PLATFORM = Path("platforms/aoba-64.xml")
DEFAULT_WORKLOAD = Path("workloads/markovian-3000.json")
DEMO_POLICIES = ("fcfsbIpm", "snfIpm", "snficon")


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "demo", help="compare FCFS/B+IPM, SNF+IPM and SNF-ICON and write a report",
        description="Run FCFS/B+IPM, SNF+IPM and SNF-ICON on the Markovian 3000 workload and "
                    "the AOBA-64 platform (made first if missing) in parallel, print a "
                    "comparison and write the report (DIR/report.md, DIR/report.html).")
    parser.add_argument("-o", "--output", default="out/demo", metavar="DIR",
                        help="report folder; the runs go to DIR/results (default: %(default)s)")
    parser.add_argument("--jobs", type=int, metavar="N",
                        help="simulate only the workload's first N jobs (default: all)")
    parser.add_argument("--platform", default=str(DEFAULT_PLATFORM), metavar="FILE",
                        help="platform (made with the AOBA model, 64 nodes, if missing; "
                             "default: %(default)s)")
    parser.add_argument("--workload", default=str(DEFAULT_WORKLOAD), metavar="FILE",
                        help="workload (the paper's Markovian one is generated if missing; "
                             "default: %(default)s)")
    parser.add_argument("--workers", type=int, default=len(DEMO_POLICIES), metavar="N",
                        help="parallel runs (default: %(default)s)")
    parser.set_defaults(func=demo)


def ensure_inputs(platform: Path, workload: Path) -> list[str]:
    """Generate the platform and workload if absent; return what was made."""
    made = []
    if not platform.is_file():
        from snficon.platform.generate import NODE_MODELS, render_platform, write_platform

        write_platform(platform, render_platform(NODE_MODELS["aoba"], 64))
        made.append(f"platform {platform} (AOBA model, 64 nodes)")
    if not workload.is_file():
        from snficon.workload.markovian import MarkovianParams, generate_markovian
        from snficon.workload.writer import BatsimOptions, write_batsim_workload

        params = MarkovianParams()
        workload.parent.mkdir(parents=True, exist_ok=True)
        write_batsim_workload(workload, generate_markovian(params), params.nodes,
                              BatsimOptions())
        made.append(f"workload {workload} (Markovian, {params.n_jobs} jobs)")
    return made


def campaign_text(platform: Path, workload: Path, jobs: int | None) -> str:
    """The demo as a campaign file (absolute paths, JSON strings are TOML strings)."""
    entry = json.dumps(str(platform.resolve()))
    load = "{ file = " + json.dumps(str(workload.resolve())) + (
        f", jobs = {jobs} }}" if jobs else " }")
    policies = ", ".join(json.dumps(p) for p in DEMO_POLICIES)
    return (f'name = "demo"\n\n[platforms]\n{platform.stem} = {entry}\n\n'
            f'[workloads]\n{workload.stem} = {load}\n\n'
            f'[[group]]\nname = "base"\nplatforms = ["{platform.stem}"]\n'
            f'workloads = ["{workload.stem}"]\npolicies = [{policies}]\n')


def demo(args: argparse.Namespace) -> int:
    started = time.monotonic()
    check_count(args.jobs, "--jobs", 1, MAX_JOBS)
    check_count(args.workers, "--workers", 1, MAX_WORKERS)
    platform, workload = Path(args.platform), Path(args.workload)
    output = check_output_folder(args.output)
    for made in (platform, workload):
        if not made.is_file():
            check_output_file(made)

    from snficon.campaign.config import parse_campaign
    from snficon.campaign.expand import expand, make_specs
    from snficon.campaign.runner import run_campaign
    from snficon.report import build_report
    from snficon.report.data import J_PER_MWH, load_results

    for line in ensure_inputs(platform, workload):
        print(f"made {line}")
    loaded = parse_campaign(campaign_text(platform, workload, args.jobs), "demo", Path.cwd())
    results = output / "results"
    specs = make_specs(expand(loaded).plans, results / "runs")
    what = f"first {args.jobs} jobs of " if args.jobs else ""
    print(f"demo: {', '.join(DEMO_POLICIES)} on {what}{workload.name} / {platform.name}, "
          f"{min(args.workers, len(specs))} in parallel")
    outcome = run_campaign(specs, results, executor="local", workers=args.workers)
    for run, error in outcome.failures:
        print(f"  failed {run}: {error}")
    frame = load_results(results)
    order = {policy: i for i, policy in enumerate(DEMO_POLICIES)}
    frame = frame.sort_values("policy", key=lambda s: s.map(order))
    header = (f"{'policy':<12} {'mean wait (min)':>15} {'max wait (min)':>14} "
              f"{'energy (MWh)':>12} {'wasted (MWh)':>12} {'ICON share':>10}")
    print(header)
    print("-" * len(header))
    for _, row in frame.iterrows():
        share = row.get("icon_time_share")
        share_text = f"{100 * share:.1f} %" if share == share and share is not None else "-"
        print(f"{row['label']:<12} {row['mean_wait'] / 60:>15.2f} {row['max_wait'] / 60:>14.1f} "
              f"{row['energy_total'] / J_PER_MWH:>12.3f} {row['energy_wasted'] / J_PER_MWH:>12.3f}"
              f" {share_text:>10}")
    written = build_report(results, output, title="SNF-ICON demo")
    print(f"report: {written.markdown}, {written.html} ({len(written.figures)} figure files)")
    print(f"done in {time.monotonic() - started:.1f} s")
    return 1 if outcome.failed else 0
