"""``snficon carbon ...``: make a synthetic signal, check a signal file, account a finished run.

``synthetic`` writes a seeded diurnal signal labelled as synthetic
(:mod:`snficon.carbon.synthetic`); ``check`` reads a signal file with its gap
rule and prints a summary and its gaps; ``account`` computes the emissions of
a finished run's output files (the embedded engine's or the real Batsim's)
and prints them as JSON, or adds them to a ``metrics.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from snficon.analysis.carbon import carbon_from_outputs
from snficon.carbon.signal import format_instant, read_signal, signal_csv_text
from snficon.carbon.synthetic import DiurnalParams, synthetic_diurnal
from snficon.commands.compare import add_run_check_options
from snficon.commands.limits import MAX_SIGNAL_INTERVALS
from snficon.commands.run import add_carbon_options, carbon_of
from snficon.errors import InputError
from snficon.fileio import atomic_write_text
from snficon.manifest import MANIFEST, accept_run_folder, amend_manifest, run_folder_of

_DEFAULTS = DiurnalParams()


def _synthetic(args: argparse.Namespace) -> int:
    if args.days > 0 and args.step > 0:  # other values: DiurnalParams says what is wrong
        intervals = args.days * 86400 / args.step
        if intervals > MAX_SIGNAL_INTERVALS:
            raise InputError(f"--days {args.days:g} with --step {args.step:g} s makes "
                             f"{intervals:.3g} intervals, more than {MAX_SIGNAL_INTERVALS:,}")
    params = DiurnalParams(days=args.days, step_s=args.step, start=args.start, mean=args.mean,
                           amplitude=args.amplitude, peak_hour=args.peak_hour,
                           noise_sd=args.noise, seed=args.seed)
    signal = synthetic_diurnal(params)
    atomic_write_text(args.output, signal_csv_text(signal))
    print(signal.summary().replace(signal.source, args.output, 1))
    return 0


def _check(args: argparse.Namespace) -> int:
    signal = read_signal(args.file, args.fill)
    print(signal.summary())
    for gap in signal.gaps:
        print(f"  gap: {gap.intervals} interval(s) from {format_instant(gap.first_missing_s)} "
              f"(before line {gap.line}), filled by {signal.fill_rule!r}")
    return 0


def _account(args: argparse.Namespace) -> int:
    if args.carbon is None:
        raise InputError("carbon account: give the signal with --carbon FILE")
    signal = carbon_of(args)
    note = accept_run_folder(args.prefix, allow_incomplete=args.allow_incomplete,
                             foreign=args.foreign)
    emissions = carbon_from_outputs(args.prefix, signal)
    if emissions is None:
        raise InputError(f"{args.prefix}_consumed_energy.csv: missing (the run had no -E), "
                         "so there is no energy to account")
    record = {**emissions.as_dict(), "carbon_signal": Path(args.carbon).name,
              "carbon_start": signal.start_text, **({"carbon_note": note} if note else {})}
    if note:
        print(f"snficon: note: {note}", file=sys.stderr)
    if args.metrics:
        path = Path(args.metrics)
        try:
            existing = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        except ValueError as exc:
            raise InputError(f"{path}: not JSON ({exc})") from None
        if not isinstance(existing, dict):
            raise InputError(f"{path}: not a metrics file (a JSON object), refusing to "
                             "replace it")
        existing.update(record)
        atomic_write_text(path, json.dumps(existing, sort_keys=True, indent=2,
                                           allow_nan=False) + "\n")
        own = path.parent.resolve() == run_folder_of(args.prefix).resolve()
        if own and note is None and (path.parent / MANIFEST).is_file():
            amend_manifest(path.parent, path.name, "carbon keys added by 'snficon carbon "
                                                   "account'")
    print(json.dumps(record, sort_keys=True, indent=2))
    return 0


def register(commands: argparse._SubParsersAction) -> None:
    """Add ``carbon synthetic|check|account`` to the ``snficon`` command."""
    parser = commands.add_parser("carbon", help="carbon-intensity signals and run emissions")
    parser.set_defaults(func=lambda args: parser.print_help())
    sub = parser.add_subparsers(dest="carbon_command", metavar="ACTION")

    syn = sub.add_parser("synthetic", help="write a synthetic diurnal signal (not measured)",
                         description="A seeded diurnal carbon-intensity signal, labelled as "
                                     "synthetic in its first line (snficon.carbon.synthetic).")
    syn.add_argument("-o", "--output", required=True, metavar="FILE")
    syn.add_argument("--days", type=float, default=_DEFAULTS.days)
    syn.add_argument("--step", type=float, default=_DEFAULTS.step_s, metavar="S")
    syn.add_argument("--start", default=_DEFAULTS.start, metavar="ISO")
    syn.add_argument("--mean", type=float, default=_DEFAULTS.mean, metavar="G_PER_KWH")
    syn.add_argument("--amplitude", type=float, default=_DEFAULTS.amplitude, metavar="G_PER_KWH")
    syn.add_argument("--peak-hour", type=float, default=_DEFAULTS.peak_hour, metavar="H")
    syn.add_argument("--noise", type=float, default=_DEFAULTS.noise_sd, metavar="G_PER_KWH",
                     help="standard deviation of the AR(1) noise")
    syn.add_argument("--seed", type=int, default=_DEFAULTS.seed)
    syn.set_defaults(func=_synthetic)

    check = sub.add_parser("check", help="read a signal file and summarise it")
    check.add_argument("file", metavar="FILE")
    check.add_argument("--fill", choices=("linear", "hold", "refuse"), default="linear")
    check.set_defaults(func=_check)

    account = sub.add_parser(
        "account", help="emissions of a finished run from its output files",
        description="Carbon of the run whose Batsim output files are PREFIX_jobs.csv and "
                    "PREFIX_consumed_energy.csv (e.g. out/x/out), in the energy metrics' "
                    "window and partition (snficon.analysis.carbon).")
    account.add_argument("prefix", metavar="PREFIX")
    account.add_argument("--metrics", metavar="FILE",
                         help="also add the keys to this metrics.json (written atomically)")
    add_carbon_options(account)
    add_run_check_options(account)
    account.set_defaults(func=_account)
