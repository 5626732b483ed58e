"""The decision core keeps no hidden state: what an invocation derives is passed as
arguments (:class:`~snficon.core.node_choice.StateGroups`, the release map, the idle
timers), what lives across invocations is a field of a part's state object.

Checked on the source of the core modules: no writes into an object's ``__dict__``, no
memo dictionary on the node table, no ``functools`` caches.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import snficon.core

CORE = Path(snficon.core.__file__).parent
#: Modules whose caches are removed elsewhere (issue 33, the screen windows).
ELSEWHERE = {"screen.py"}
MODULES = sorted(p.name for p in CORE.glob("*.py") if p.name not in ELSEWHERE)


def hidden_state(source: str) -> list[str]:
    """The hidden-state constructs of ``source``: ``__dict__`` reads or writes, ``memo``
    attributes, ``functools.cached_property`` and ``functools.lru_cache``/``cache``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in ("__dict__", "memo"):
            found.append(f"line {node.lineno}: .{node.attr}")
        name = (node.attr if isinstance(node, ast.Attribute)
                else node.id if isinstance(node, ast.Name) else None)
        if name in ("cached_property", "lru_cache", "cache"):
            found.append(f"line {node.lineno}: {name}")
    return found


def test_the_check_finds_each_construct():
    source = ("import functools\n"
              "class A:\n"
              "    @functools.cached_property\n"
              "    def x(self): return self.__dict__.get('y')\n"
              "@functools.lru_cache(maxsize=8)\n"
              "def f(nodes): return nodes.memo\n")
    assert len(hidden_state(source)) == 4


@pytest.mark.parametrize("module", MODULES)
def test_core_module_keeps_no_hidden_state(module):
    assert hidden_state((CORE / module).read_text()) == []
