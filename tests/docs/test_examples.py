"""The documentation's examples run: every block of the getting-started page and
the tutorials runs (or, where the page says it cannot run here, parses), and
what a page shows a command printing is what it prints.

The conventions (``:class: run``, ``output``, ``file``, ``syntax``) are in
``tests/docs/blocks.py``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from tests.docs.blocks import DOCS, Block, blocks, output_matches, plain_fences

REPO = DOCS.parent
#: The pages whose every block is run or checked.
PAGES = [DOCS / "getting-started.md", *sorted((DOCS / "tutorials").glob("*.md"))]
COPIED = ("platforms", "workloads", "expe", "examples", "schedulers")
#: ``uv run CMD`` runs CMD from this environment (PATH below), as from a clone.
UV_SHIM = """
uv() {
  if [ "$1" = run ]; then
    shift
    while [ "${1#-}" != "$1" ]; do shift; done
    "$@"
  else
    echo "uv $1: the docs tests run only 'uv run'" >&2; return 2
  fi
}
"""
BLOCK_TIMEOUT = 180


def page_id(page: Path) -> str:
    return str(page.relative_to(DOCS))


def test_the_pages_exist():
    assert len(PAGES) >= 10, [page_id(p) for p in PAGES]


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_block_is_marked(page):
    """A block no test runs would rot: each says how it is checked."""
    unmarked = [b.where for b in blocks(page) if not b.kind]
    assert not unmarked, f"code blocks without :class: run/output/file/syntax: {unmarked}"
    plain = plain_fences(page)
    assert not plain, f"{page_id(page)}: plain fences at lines {plain}; use {{code-block}}"


def check_syntax(block: Block, folder: Path) -> None:
    if block.lang in ("sh", "bash", "console"):
        done = subprocess.run(["bash", "-n"], input=block.body, text=True,
                              capture_output=True)
        assert done.returncode == 0, f"{block.where}: {done.stderr}"
    elif block.lang == "toml":
        tomllib.loads(block.body)
    elif block.lang == "yaml":
        yaml.safe_load(block.body)
    elif block.lang == "python":
        compile(block.body, block.where, "exec")
    else:
        assert block.lang in ("text", "nix", "ini"), f"{block.where}: no check for {block.lang!r}"


def blocks_before(page: Path, block: Block) -> list[Block]:
    every = blocks(page)
    return every[:every.index(block)]


def run_block(block: Block, folder: Path) -> str:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.pop("PYTHONPATH", None)
    env["COLUMNS"] = "100"
    if block.lang == "python":
        command = [sys.executable, "-c", block.body]
    else:
        assert block.lang in ("sh", "bash", "console"), f"{block.where}: cannot run {block.lang}"
        command = ["bash", "-c", "set -euo pipefail\n" + UV_SHIM + block.body]
    try:
        done = subprocess.run(command, cwd=folder, env=env, text=True, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              timeout=BLOCK_TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{block.where}: still running after {BLOCK_TIMEOUT} s")
    assert done.returncode == 0, (f"{block.where}: exit {done.returncode}\n{block.body}\n"
                                  f"--- printed:\n{done.stdout}")
    return done.stdout


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_page_examples(page, tmp_path):
    """Run the page's blocks in order in a folder of its own; check shown outputs."""
    for name in COPIED:
        shutil.copytree(REPO / name, tmp_path / name,
                        ignore=shutil.ignore_patterns("__pycache__"))
    printed: str | None = None
    for block in blocks(page):
        if block.kind == "run" and block.missing:
            check_syntax(block, tmp_path)  # the page says what the block needs
            printed = None
        elif block.kind == "syntax":
            check_syntax(block, tmp_path)
            printed = None
        elif block.kind == "file":
            assert block.caption, f"{block.where}: a file block needs its path as :caption:"
            check_syntax(block, tmp_path)
            target = tmp_path / block.caption
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.body, encoding="utf-8")
            printed = None
        elif block.kind == "run":
            printed = run_block(block, tmp_path)
        elif block.kind == "output":
            if printed is None and blocks_before(page, block)[-1].missing:
                continue
            assert printed is not None, f"{block.where}: an output block after no run block"
            assert output_matches(block.body, printed), (
                f"{block.where}: the page shows\n{block.body}\n--- the command printed\n{printed}")
            printed = None


def included_shell_blocks(page: Path) -> list[tuple[str, str]]:
    """The sh fences of the files a page includes (``{include} PATH``)."""
    found = []
    for target in re.findall(r"^`{3,}\{include\}\s+(\S+)", page.read_text(encoding="utf-8"),
                             re.MULTILINE):
        path = (page.parent / target).resolve()
        text = path.read_text(encoding="utf-8")
        for match in re.finditer(r"^```(?:sh|bash)\n(.*?)^```", text, re.MULTILINE | re.DOTALL):
            found.append((f"{path.relative_to(REPO)}:{text.count(chr(10), 0, match.start()) + 1}",
                          match[1]))
    return found


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_included_shell_blocks_parse(page):
    """An included file's shell blocks (e.g. nix/README.md's) are at least valid shell."""
    for where, body in included_shell_blocks(page):
        done = subprocess.run(["bash", "-n"], input=body, text=True, capture_output=True)
        assert done.returncode == 0, f"{where}: {done.stderr}"
