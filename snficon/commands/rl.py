"""``snficon rl train``: train the RL Budiarjo power manager (:mod:`snficon.rl.train`).

``snficon rl train --platform P --train SIMPLE REAL COMPLEX -o MODEL_DIR``
runs ``--epochs`` episodes of each training workload in turn (the
curriculum of ``snficon workload curriculum``), writes
``MODEL_DIR/model.pt`` after every epoch and ``MODEL_DIR/train.csv`` (one row
per epoch); run again, it resumes after the last finished epoch. The model
is then used as ``snficon run --policy rlBudiarjo --set model=MODEL_DIR/model.pt``.
Needs the ``rl`` dependency group (PyTorch, Gymnasium).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from snficon.commands.limits import MAX_EPOCHS, MAX_WORKERS, check_count
from snficon.errors import InputError
from snficon.fileio import check_output_folder


def register(commands: argparse._SubParsersAction) -> None:
    """Add ``rl train`` to the ``snficon`` parser."""
    parser = commands.add_parser("rl", help="train the RL Budiarjo baseline's power manager")
    parser.set_defaults(func=lambda args: parser.print_help())
    actions = parser.add_subparsers(dest="rl_command", metavar="ACTION")
    train = actions.add_parser(
        "train", help="train a model on a curriculum of workloads (resumable)",
        description="A2C on the power-management environment: --epochs episodes of each "
                    "--train workload in turn; a checkpoint after every epoch; run again to "
                    "resume.")
    train.add_argument("--platform", required=True, help="platform XML")
    train.add_argument("--train", nargs="+", required=True, metavar="WORKLOAD",
                       help="training workloads in curriculum order (e.g. simple.json "
                            "real.json complex.json)")
    train.add_argument("-o", "--output", required=True, metavar="MODEL_DIR",
                       help="folder of model.pt and train.csv")
    train.add_argument("--epochs", type=int, default=10,
                       help="episodes per workload (default %(default)s, the authors')")
    train.add_argument("--seed", type=int, default=0, help="network and sampling seed")
    train.add_argument("--order", default="fcfs-easy",
                       help="dispatch order part (default %(default)s)")
    train.add_argument("--energy-weight", type=float, default=0.5, help="w_E of the reward")
    train.add_argument("--waiting-weight", type=float, default=0.5, help="w_W of the reward")
    train.add_argument("--period", type=float, default=3600.0,
                       help="the agent's decision period in s (default %(default)s; use the "
                            "same --set period=... when running the model)")
    train.add_argument("--every-event", action="store_true",
                       help="decide at every invocation, not on the clock")
    train.add_argument("--rollout-steps", type=int, default=32,
                       help="steps per A2C update (default %(default)s)")
    train.add_argument("--learning-rate", type=float, default=1e-4)
    train.add_argument("--threads", type=int, default=1, help="PyTorch threads")
    train.set_defaults(func=_train)


def _train(args: argparse.Namespace) -> int:
    try:
        from snficon.rl.a2c import A2CConfig
        from snficon.rl.train import TrainConfig, train, write_summary
    except ImportError as exc:
        raise InputError(f"rl train needs PyTorch and Gymnasium ({exc}): install the rl "
                         "group (uv sync --group rl)") from None
    check_count(args.epochs, "--epochs", 1, MAX_EPOCHS)
    check_count(args.rollout_steps, "--rollout-steps", 1, MAX_EPOCHS)
    check_count(args.threads, "--threads", 1, MAX_WORKERS)
    folder = check_output_folder(args.output)
    for path in (args.platform, *args.train):
        if not Path(path).is_file():
            raise InputError(f"{path}: file not found")
    try:
        a2c = A2CConfig(rollout_steps=args.rollout_steps, learning_rate=args.learning_rate)
    except ValueError as exc:
        raise InputError(f"rl train: {exc}") from None
    config = TrainConfig(platform=str(args.platform), workloads=tuple(map(str, args.train)),
                         epochs=args.epochs, seed=args.seed, order=args.order,
                         energy_weight=args.energy_weight, waiting_weight=args.waiting_weight,
                         period=args.period, every_event=args.every_event, a2c=a2c,
                         threads=args.threads)
    stats = train(config, folder, log=lambda text: print(text, file=sys.stderr, flush=True))
    write_summary(folder, stats)
    print(f"model: {folder / 'model.pt'} (log {folder / 'train.csv'})")
    return 0
