"""``snficon robin``: run a robin experiment file (batexpe 1.2's YAML) without robin."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from snficon.fileio import check_output_folder
from snficon.robin.files import read_robin
from snficon.robin.runner import ENGINES, run_robin


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "robin", help="run a robin experiment file (scheduler + simulator, with timeouts)",
        description="Run FILE.yaml the way robin (batexpe 1.2) does: start schedcmd, then "
                    "batcmd, apply the ready, simulation, success and failure timeouts and "
                    "keep OUTPUT-DIR/log/{batsim,sched.out,sched.err}.log. Exits 0 only if "
                    "both commands succeeded. Run it from the folder the file's paths are "
                    "relative to (the repository root for files of `snficon campaign "
                    "--robin`); the repository root is put on PYTHONPATH.")
    parser.add_argument("file", metavar="FILE.yaml", help="robin experiment file")
    parser.add_argument("--engine", choices=ENGINES, default="batsim",
                        help="batsim: run batcmd as written; embedded: replace its leading "
                             "`batsim` by `snficon-batsim` (default: %(default)s)")
    parser.set_defaults(func=robin)


def robin(args: argparse.Namespace) -> int:
    experiment = read_robin(args.file)
    check_output_folder(experiment.output_dir)
    outcome = run_robin(experiment, engine=args.engine)
    print(outcome.summary())
    if not outcome.succeeded:
        for process in outcome.processes:
            if not process.succeeded:
                _tail(process.log.split(", ")[-1], sys.stderr)
    return 0 if outcome.succeeded else 1


def _tail(path: str, stream, lines: int = 8) -> None:
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return
    if text:
        stream.write(f"--- last lines of {path}:\n" + "\n".join(text[-lines:]) + "\n")
