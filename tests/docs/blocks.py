"""The code blocks of the documentation's pages, and how the tests run them.

A page marks each block with a class (a MyST directive option), read here:

- ``:class: run``: a shell block (``sh``) or Python (``python``) the tests run,
  in order, in one temporary folder per page holding copies of the repository's
  ``platforms/``, ``workloads/``, ``expe/``, ``examples/`` and ``schedulers/``;
- ``:class: output``: what the ``run`` block before it prints (stdout and
  stderr together), compared as doctest does with ``...`` matching anything
  and runs of blank space equal;
- ``:class: file``: a file the page makes, written to its ``:caption:`` path
  before the blocks after it run;
- ``:class: run needs-MODULE``: run when ``MODULE`` is importable (an optional
  dependency group), else checked for syntax only, as the page says;
- ``:class: syntax``: checked for syntax only (``bash -n``, a TOML, YAML or
  Python parse): a command that cannot run here (real Batsim, Slurm, nix) or
  takes too long, which the page says.

In the shell blocks, ``uv run CMD`` runs ``CMD`` from the environment the tests
run in (the same ``snficon``), as ``uv run`` does from a clone.
"""

from __future__ import annotations

import doctest
import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"

#: A fenced MyST directive ```{code-block} LANG, its :key: value options, a blank
#: line, the body and the closing fence.
_BLOCK = re.compile(
    r"^(?P<fence>`{3,})\{code-block\}[ \t]*(?P<lang>\S*)[ \t]*\n"
    r"(?P<opts>(?::[\w-]+:[^\n]*\n)*)"
    r"\n?(?P<body>.*?)^(?P=fence)[ \t]*$",
    re.MULTILINE | re.DOTALL,
)
_PLAIN_FENCE = re.compile(r"^`{3,}[A-Za-z]", re.MULTILINE)
KINDS = ("run", "output", "file", "syntax")


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    lang: str
    kind: str
    caption: str
    body: str
    needs: tuple[str, ...] = ()

    @property
    def missing(self) -> list[str]:
        """The modules this block needs that are not installed."""
        return [name for name in self.needs if importlib.util.find_spec(name) is None]

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The code-block directives of ``page``, in order (``kind`` "" when unmarked)."""
    text = page.read_text(encoding="utf-8")
    found = []
    for match in _BLOCK.finditer(text):
        opts = dict(re.findall(r"^:([\w-]+):[ \t]*(.*)$", match["opts"], re.MULTILINE))
        classes = opts.get("class", "").split()
        kind = next((c for c in classes if c in KINDS), "")
        line = text.count("\n", 0, match.start()) + 1
        needs = tuple(c.removeprefix("needs-") for c in classes if c.startswith("needs-"))
        found.append(Block(str(page.relative_to(DOCS)), line, match["lang"], kind,
                           opts.get("caption", "").strip(), match["body"], needs))
    return found


def plain_fences(page: Path) -> list[int]:
    """Lines of plain fences with a language (```sh), which no test would run."""
    text = page.read_text(encoding="utf-8")
    return [text.count("\n", 0, m.start()) + 1 for m in _PLAIN_FENCE.finditer(text)]


def output_matches(shown: str, printed: str) -> bool:
    """``printed`` matches the page's ``shown`` output (``...`` matching anything)."""
    checker = doctest.OutputChecker()
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    return checker.check_output(shown.strip() + "\n", printed.strip() + "\n", flags)
