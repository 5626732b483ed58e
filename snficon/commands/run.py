"""``snficon run``: one simulation on the embedded engine, with a short summary."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

from snficon.adapter.scheduler import ADAPTER_OPTIONS
from snficon.analysis.time_limits import FieldNames
from snficon.campaign.runs import advice_extra, write_run_metrics
from snficon.carbon.mapping import MappedSignal
from snficon.carbon.signal import FILL_RULES, parse_instant, read_signal
from snficon.core.carbon_signal import NO_SIGNAL, fill_signal_options, signal_option_names
from snficon.drivers.progress import terminal_progress
from snficon.drivers.session import simulate_in_process, simulate_with_pybatsim
from snficon.errors import InputError, OutputError, SnficonError, UnsupportedError
from snficon.fileio import check_output_file, incomplete_marker
from snficon.manifest import write_manifest
from snficon.part_registry import SPEC_FORM, absolute_spec, part_names
from snficon.policy_table import POLICIES, policy_entry, policy_label
from snficon.staging import StagedOutput, claim_output, discard, keep_partial, publish


def parse_settings(items: list[str]) -> dict[str, Any]:
    """Turn ``name=value`` strings into scheduler options (values read as JSON when they parse)."""
    options: dict[str, Any] = {}
    for item in items:
        name, sep, text = item.partition("=")
        if not sep or not name:
            raise InputError(f"--set {item!r}: expected name=value")
        try:
            options[name] = json.loads(text)
        except json.JSONDecodeError:
            options[name] = text
        except (ValueError, RecursionError):  # a 5,000-digit number, thousands of brackets
            raise InputError(f"--set {name}: the value is not one an option can take "
                             f"(too long a number or nested too deeply): {text[:40]!r}") from None
    return options


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "run", help="simulate one platform and workload under one policy",
        description="Simulate on the embedded Batsim-compatible engine and write Batsim's "
                    "output files (OUTDIR/out_jobs.csv, ...).")
    parser.add_argument("--platform", required=True, help="SimGrid/Batsim platform XML")
    parser.add_argument("--workload", required=True, action="append",
                        help="Batsim JSON workload (repeatable)")
    who = parser.add_mutually_exclusive_group()
    who.add_argument("--policy", default="snficon", choices=list(POLICIES),
                     help="scheduling policy (default: %(default)s)")
    who.add_argument("--scheduler", metavar="FILE.py",
                     help="any pybatsim scheduler file instead of a policy")
    parser.add_argument("--order", metavar="PART",
                        help="replace the policy's dispatch order: "
                             f"{', '.join(part_names('order'))}, or a class ({SPEC_FORM})")
    parser.add_argument("--power", metavar="PART",
                        help="replace the policy's power manager: "
                             f"{', '.join(part_names('power'))}, or a class")
    parser.add_argument("--layer", action="append", default=None, metavar="PART",
                        help="add a layer to the policy (repeatable): "
                             f"{', '.join(part_names('layer'))}, or a class")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="scheduler option (repeatable), as pybatsim's -o JSON keys")
    parser.add_argument("-o", "--output", default="out/run",
                        help="output folder: new or empty (written aside, moved into place "
                             "at the end, manifest.json last)")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace the output folder when it holds an earlier run "
                             "(a folder holding other files is never replaced)")
    parser.add_argument("--engine", choices=("inprocess", "zmq"), default="inprocess",
                        help="inprocess (fast) or zmq (a pybatsim process over loopback)")
    parser.add_argument("--answer-timeout", type=float, metavar="SECONDS",
                        help="--engine zmq: give up when the scheduler does not answer a "
                             "message within this wall-clock time (default: 600)")
    parser.add_argument("--no-energy", action="store_true", help="run without Batsim's -E")
    parser.add_argument("--transcript", action="store_true",
                        help="also write every protocol message (out_transcript.jsonl)")
    add_carbon_options(parser)
    parser.add_argument("--transition-jitter", type=float, default=0.0, metavar="FRACTION",
                        help="NOT Batsim's model: draw every switch-on/off duration from "
                             "Normal(mean, FRACTION x mean), as the paper authors' simulator "
                             "does with 0.1 (in-process engine only; needs --seed)")
    parser.add_argument("--seed", type=int, default=None,
                        help="seed of the transition jitter's generator (e.g. 42)")
    parser.set_defaults(func=run)


def run_parameters(args: argparse.Namespace, scheduler: str,
                   options: dict[str, Any]) -> dict[str, Any]:
    """What ``manifest.json`` records of a run: its inputs (as given), scheduler and options
    (the run's own file paths left out: they name the folder it was written in)."""
    return {
        "command": "run", "platform": args.platform, "workloads": list(args.workload),
        "scheduler": scheduler, "engine": args.engine, "energy": not args.no_energy,
        "options": {k: v for k, v in options.items() if k not in ("decisions", "platform")},
        "carbon": args.carbon, "carbon_start": args.carbon_start,
        "carbon_fill": args.carbon_fill, "carbon_wrap": not args.carbon_no_wrap,
        "transition_jitter": args.transition_jitter, "seed": args.seed,
    }


def add_carbon_options(parser: argparse.ArgumentParser) -> None:
    """``--carbon FILE --carbon-start ISO [--carbon-fill RULE] [--carbon-no-wrap]``."""
    group = parser.add_argument_group(
        "carbon", "emissions in metrics.json (carbon_total_kg, carbon_compute_kg, "
                  "carbon_wasted_kg) from a timestamp_utc,gco2_per_kwh signal")
    group.add_argument("--carbon", metavar="FILE", help="carbon-intensity signal (CSV)")
    group.add_argument("--carbon-start", metavar="ISO",
                       help="the instant of simulated t = 0, e.g. 2023-03-01T00:00Z "
                            "(default: the signal's first interval)")
    group.add_argument("--carbon-fill", choices=FILL_RULES, default="linear",
                       help="how the signal's gaps are filled (default: %(default)s)")
    group.add_argument("--carbon-no-wrap", action="store_true",
                       help="refuse a run that outlasts the signal instead of wrapping round")


def carbon_of(args: argparse.Namespace) -> MappedSignal | None:
    """The mapped signal the carbon options name, read and checked (None without --carbon)."""
    if args.carbon is None:
        if args.carbon_start is not None:
            raise InputError("--carbon-start needs --carbon FILE")
        return None
    signal = read_signal(args.carbon, args.carbon_fill)
    start = (signal.first_s if args.carbon_start is None
             else parse_instant(args.carbon_start, "--carbon-start"))
    return MappedSignal(signal, start, wrap=not args.carbon_no_wrap)


def with_run_signal(policy: str, options: dict[str, Any], carbon: MappedSignal | None,
                    path: str | None) -> dict[str, Any]:
    """``options`` with the carbon parts' signal options left ``none`` set to the run's
    signal (:func:`snficon.core.carbon_signal.fill_signal_options`); InputError before the
    run when a carbon part still has none."""
    composition = policy_entry(policy).composition(
        {k: v for k, v in options.items() if k not in ADAPTER_OPTIONS})
    fields = {f.name: getattr(composition.params[part], f.name) for part in composition.parts
              for f in dataclasses.fields(composition.params[part])}
    keys = [name for name in fields if name in signal_option_names(fields)]
    if carbon is not None and path is not None:
        options = fill_signal_options(options, keys, str(Path(path).resolve()),
                                      carbon.start_text, carbon.signal.fill_rule, carbon.wrap)
    missing = [key for key in keys if options.get(key, fields[key]) == NO_SIGNAL]
    if missing:
        raise InputError(f"policy {policy_label(policy, options)} decides with carbon "
                         f"intensity: give --carbon FILE (or --set {missing[0]}=FILE)")
    return options


def run(args: argparse.Namespace) -> int:
    scheduler = args.scheduler or args.policy
    options = parse_settings(args.set)
    for key, value in (("order", args.order), ("power", args.power), ("layers", args.layer)):
        if value is not None:
            if args.scheduler:
                raise InputError(f"--{key.rstrip('s')} composes the project's policies; it "
                                 "does not apply to --scheduler FILE.py")
            options[key] = ([absolute_spec(v) for v in value] if isinstance(value, list)
                            else absolute_spec(value))
    jitter = {}
    if args.transition_jitter:
        if args.engine != "inprocess":
            raise UnsupportedError("--transition-jitter is outside Batsim's model: the zmq "
                                   "engine stands for Batsim and refuses it (use --engine "
                                   "inprocess)")
        if args.seed is None:
            raise InputError("--transition-jitter needs --seed (the paper authors use 42)")
        jitter = {"transition_jitter": args.transition_jitter, "seed": args.seed}
    elif args.seed is not None:
        raise InputError("--seed only seeds --transition-jitter, which is not set")
    staged = claim_output(args.output, args.overwrite)
    try:
        return _run_staged(args, scheduler, options, jitter, staged)
    except SnficonError:  # some are OSErrors too (a scheduler's timeout)
        if staged.work.exists():
            discard(staged)
        raise
    except OSError as exc:  # a full disk, an I/O error: nothing that looks complete is left
        discard(staged)
        where = staged.shown(exc.filename) if exc.filename else f"{staged.target}/"
        raise OutputError(f"cannot write {where}: {exc.strerror or exc}; nothing was kept "
                          f"in {staged.target}/ (run again once the cause is fixed)") from None
    except BaseException:
        if staged.work.exists():
            discard(staged)
        raise


def _run_staged(args: argparse.Namespace, scheduler: str, options: dict[str, Any],
                jitter: dict[str, Any], staged: StagedOutput) -> int:
    """The run itself, written in ``staged.work`` and moved into place at its end."""
    output = staged.work
    if scheduler in POLICIES:
        options.setdefault("platform", str(Path(args.platform).resolve()))
        options.setdefault("decisions", str((output / "decisions.csv").resolve()))
    if isinstance(options.get("decisions"), str):
        check_output_file(options["decisions"])
    prefix = output / "out"
    carbon = carbon_of(args)
    if scheduler in POLICIES:
        options = with_run_signal(scheduler, options, carbon, args.carbon)
    simulate = simulate_in_process if args.engine == "inprocess" else simulate_with_pybatsim
    started = time.perf_counter()
    link: dict[str, Any] = {}
    if args.engine == "inprocess" and sys.stdout.isatty():
        link["progress"] = terminal_progress(sys.stderr)  # None unless stderr is one too
    if args.engine == "zmq":
        link["log_dir"] = output / "log"
        if args.answer_timeout is not None:
            if not args.answer_timeout > 0:
                raise InputError(f"--answer-timeout: expected seconds > 0, got "
                                 f"{args.answer_timeout:g}")
            link["answer_timeout_s"] = args.answer_timeout
    elif args.answer_timeout is not None:
        raise InputError("--answer-timeout applies to --engine zmq (a scheduler in this "
                         "process cannot be stopped while it decides)")
    try:
        simulate(args.platform, args.workload, scheduler, options, energy=not args.no_energy,
                 export_prefix=prefix, record=args.transcript, **link, **jitter)
    except SnficonError as exc:
        if incomplete_marker(prefix).exists() and keep_partial(staged):
            exc.args = (f"{staged.shown(exc)}; the output files until then are in "
                        f"{staged.target}/, marked unfinished "
                        f"({incomplete_marker(prefix).name}, no manifest)",)
        raise
    except KeyboardInterrupt:
        if incomplete_marker(prefix).exists() and keep_partial(staged):
            print(f"snficon: the output files until the interrupt are in {staged.target}/, "
                  f"marked unfinished by {incomplete_marker(prefix).name} (no manifest)",
                  file=sys.stderr)
        raise
    wall = time.perf_counter() - started
    advice = advice_extra(scheduler, options, carbon, prefix, args.workload)
    metrics, extra = write_run_metrics(prefix, options.get("decisions"), output / "metrics.json",
                                       {**jitter, **advice} or None, carbon=carbon,
                                       workloads=args.workload,
                                       fields=FieldNames.from_options(options))
    write_manifest(output, run_parameters(args, scheduler, options))
    publish(staged)
    output = staged.target
    policy_options = {k: v for k, v in options.items() if k not in ADAPTER_OPTIONS}
    shown = policy_label(scheduler, policy_options) if args.scheduler is None else scheduler
    print(f"{shown} on {Path(args.platform).name} with "
          f"{', '.join(Path(w).name for w in args.workload)} ({args.engine})")
    print(f"  jobs: {metrics.jobs} ran, {metrics.jobs_rejected} rejected, "
          f"{metrics.jobs_killed} killed; makespan {metrics.makespan / 3600:.2f} h")
    print(f"  mean wait: {(metrics.mean_wait or 0) / 60:.2f} min   max wait: "
          f"{(metrics.max_wait or 0) / 3600:.2f} h")
    if metrics.energy_total is not None:
        print(f"  energy to the last job end: {metrics.energy_total / 3.6e9:.3f} MWh, "
              f"wasted {metrics.energy_wasted / 3.6e9:.3f} MWh")
    if "carbon_total_kg" in extra:
        print(f"  carbon to the last job end: {extra['carbon_total_kg'] / 1e3:.3f} t CO2, "
              f"wasted {extra['carbon_wasted_kg'] / 1e3:.3f} t (from {extra['carbon_start']})")
    if "ideal_job_carbon_kg" in extra and "held_jobs" in extra:
        print(f"  advisor: {extra['held_jobs']} jobs held; job carbon promised "
              f"{extra['ideal_job_carbon_kg']:.1f} kg, realised {extra['real_job_carbon_kg']:.1f}"
              f" kg; added wait promised {extra['ideal_added_wait_s'] / 3600:.2f} h, realised "
              f"mean wait {extra['real_added_wait_s'] / 3600:.2f} h")
    if jitter:
        print(f"  switch durations drawn from Normal(mean, {args.transition_jitter:g} x mean), "
              f"seed {args.seed} (not Batsim's model)")
    if "icon_time_share" in extra:
        print(f"  ICON mode: {100 * float(extra['icon_time_share']):.1f} % of the time, "
              f"{extra['spare_planning_points']} spare-planning points")
    if "tail_waste_node_s" in extra:
        print(f"  time limits: {extra['jobs_completed']} completed, {extra['jobs_timeout']} "
              f"timeout, {extra['jobs_early_cancelled']} early-cancelled, "
              f"{extra['jobs_extended']} extended; {extra['checkpoints']} checkpoints; tail "
              f"waste {extra['tail_waste_node_s']:.0f} node-s; weighted mean wait "
              f"{(extra['weighted_mean_wait'] or 0):.0f} s")
    print(f"  wall time: {wall:.2f} s   outputs: {output}/ (out_*.csv, metrics.json"
          f"{', decisions.csv' if 'decisions' in options else ''})")
    return 0
