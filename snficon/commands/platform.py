"""``snficon platform ...``: generate and inspect platform files (SPEC section 3).

``snficon platform generate aoba --nodes 64 -o platforms/aoba-64.xml`` writes a
homogeneous platform; ``--idle-w`` ... ``--on-w`` override figures of the model
(``custom`` needs all of them); ``--group 32:aoba --group 32:taurus,idle_w=80``
writes a heterogeneous one. ``snficon platform show FILE`` prints the per-node
power models of any Batsim platform file.
"""

from __future__ import annotations

import argparse
from dataclasses import replace

from snficon.commands.limits import MAX_NODES, check_at_most
from snficon.errors import InputError
from snficon.fileio import check_output_file
from snficon.platform.generate import (
    NODE_MODELS,
    NodeModel,
    render_heterogeneous_platform,
    render_platform,
    write_platform,
)
from snficon.platform.reader import read_platform
from snficon.platform.summary import describe, summarize

CUSTOM = "custom"
# Model figure -> (command-line flag, help).
FIGURES = {
    "busy_w": ("--busy-w", "power while computing (W)"),
    "idle_w": ("--idle-w", "power while idle (W)"),
    "sleep_w": ("--sleep-w", "power while asleep (W)"),
    "off_s": ("--off-s", "switch-off duration (s)"),
    "off_w": ("--off-w", "power while switching off (W)"),
    "on_s": ("--on-s", "switch-on duration (s)"),
    "on_w": ("--on-w", "power while switching on (W)"),
}


def register(commands: argparse._SubParsersAction) -> None:
    """Add ``platform generate`` and ``platform show`` to the ``snficon`` parser."""
    parser = commands.add_parser("platform", help="generate or inspect SimGrid/Batsim platforms")
    parser.set_defaults(func=lambda args: parser.print_help())
    actions = parser.add_subparsers(dest="platform_command", metavar="ACTION")

    generate = actions.add_parser(
        "generate", help="write a platform XML file from node models",
        description="Write a Batsim platform: a master_host plus nodes of the given model(s). "
                    "Models: " + ", ".join(
                        f"{name} ({_figures_text(model)})" for name, model in NODE_MODELS.items())
                    + f"; '{CUSTOM}' needs every figure option.")
    generate.add_argument("model", nargs="?", choices=[*NODE_MODELS, CUSTOM],
                          help="node model of a homogeneous platform")
    generate.add_argument("-n", "--nodes", type=int, help="number of compute nodes")
    generate.add_argument("-o", "--output", required=True, help="platform file to write")
    figures = generate.add_argument_group("model figures (override the model's)")
    for key, (flag, text) in FIGURES.items():
        figures.add_argument(flag, dest=key, type=float, metavar="X", help=text)
    generate.add_argument(
        "-g", "--group", action="append", default=[], metavar="COUNT:MODEL[,KEY=X...]",
        help="a group of a heterogeneous platform, repeatable, in id order; KEY is one of "
             + ", ".join(FIGURES) + " (e.g. 32:aoba, 16:taurus,idle_w=80)")
    generate.set_defaults(func=run_generate)

    show = actions.add_parser("show", help="print the per-node power models of a platform file")
    show.add_argument("file", help="SimGrid/Batsim platform XML file")
    show.set_defaults(func=run_show)


def _figures_text(model: NodeModel) -> str:
    return (f"busy {model.busy_w:g} W, idle {model.idle_w:g} W, sleep {model.sleep_w:g} W, "
            f"off {model.off_s:g} s at {model.off_w:g} W, on {model.on_s:g} s at {model.on_w:g} W")


def build_model(name: str, overrides: dict[str, float]) -> NodeModel:
    """The model ``name`` with ``overrides`` applied; ``custom`` needs every figure."""
    if name == CUSTOM:
        missing = [f"{key} ({FIGURES[key][0]})" for key in FIGURES if key not in overrides]
        if missing:
            raise InputError(f"model '{CUSTOM}' needs every figure; missing: "
                             + ", ".join(missing))
        return NodeModel(CUSTOM, **overrides)
    if name not in NODE_MODELS:
        raise InputError(f"unknown node model {name!r} (known: "
                         + ", ".join([*NODE_MODELS, CUSTOM]) + ")")
    base = NODE_MODELS[name]
    return replace(base, name=CUSTOM, **overrides) if overrides else base


def parse_group(text: str) -> tuple[int, NodeModel]:
    """Parse ``COUNT:MODEL[,KEY=X...]`` (e.g. ``16:taurus,idle_w=80``) into (count, model)."""
    where = f"--group {text!r}"
    count_text, sep, rest = text.partition(":")
    if not sep:
        raise InputError(f"{where}: expected COUNT:MODEL[,KEY=X...]")
    try:
        count = int(count_text)
    except ValueError:
        raise InputError(f"{where}: count {count_text!r} is not an integer") from None
    name, *settings = (part.strip() for part in rest.split(","))
    overrides: dict[str, float] = {}
    for setting in settings:
        key, sep, value = setting.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or key not in FIGURES:
            raise InputError(f"{where}: {setting!r} is not KEY=X with KEY one of "
                             + ", ".join(FIGURES))
        try:
            overrides[key] = float(value)
        except ValueError:
            raise InputError(f"{where}: {key} = {value!r} is not a number") from None
    try:
        return count, build_model(name, overrides)
    except InputError as exc:
        raise InputError(f"{where}: {exc}") from None


def run_generate(args: argparse.Namespace) -> int:
    """``snficon platform generate``: render the platform and write it atomically."""
    check_output_file(args.output)
    overrides = {key: getattr(args, key) for key in FIGURES if getattr(args, key) is not None}
    if args.group:
        if args.model or args.nodes is not None or overrides:
            raise InputError("--group describes the whole platform: give no MODEL, --nodes "
                             "or figure option with it")
        groups = [parse_group(text) for text in args.group]
        check_at_most(sum(count for count, _ in groups), "--group (total nodes)", MAX_NODES)
        text = render_heterogeneous_platform(groups)
    else:
        if not args.model:
            raise InputError("give a MODEL (" + ", ".join([*NODE_MODELS, CUSTOM])
                             + ") or --group")
        if args.nodes is None:
            raise InputError("--nodes N is required with a MODEL")
        check_at_most(args.nodes, "--nodes", MAX_NODES)
        model = build_model(args.model, overrides)
        groups = [(args.nodes, model)]
        text = render_platform(model, args.nodes)
    path = write_platform(args.output, text)
    content = ", ".join(f"{count} x {model.name}" for count, model in groups)
    print(f"wrote {path}: {content}")
    return 0


def run_show(args: argparse.Namespace) -> int:
    """``snficon platform show``: print node count and distinct power models with counts."""
    platform = read_platform(args.file)
    groups = summarize(platform)
    print(f"{platform.source}: {platform.nb_nodes} compute nodes (master excluded), "
          f"{len(groups)} distinct model{'s' if len(groups) != 1 else ''}")
    for line in describe(groups):
        print(f"  {line}")
    return 0
