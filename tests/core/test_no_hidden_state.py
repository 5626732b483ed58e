"""The decision core keeps no hidden state: what an invocation derives is passed as
arguments (:class:`~snficon.core.node_choice.StateGroups`, the release map, the idle
timers), what lives across invocations is a field of a part's state object.

Checked on the source of the core modules: no reads or writes of an object's
``__dict__``, no memo dictionary on the node table, no ``functools`` caches; and on the
source of the whole package: no writes into an object's ``__dict__`` (a frozen object
stays frozen).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import snficon
import snficon.core

CORE = Path(snficon.core.__file__).parent
MODULES = sorted(p.name for p in CORE.glob("*.py"))
PACKAGE = Path(snficon.__file__).parent
PACKAGE_MODULES = sorted(p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py"))


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


def dict_writes(source: str) -> list[str]:
    """Writes into an object's ``__dict__`` in ``source``: ``x.__dict__[k] = v``,
    ``x.__dict__.update(...)``, ``x.__dict__.setdefault(...)``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        targets = node.targets if isinstance(node, ast.Assign) else (
            [node.target] if isinstance(node, ast.AugAssign | ast.AnnAssign) else [])
        for target in targets:
            if (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Attribute)
                    and target.value.attr == "__dict__"):
                found.append(f"line {node.lineno}: __dict__[...] =")
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("update", "setdefault")
                and isinstance(node.func.value, ast.Attribute)
                and node.func.value.attr == "__dict__"):
            found.append(f"line {node.lineno}: __dict__.{node.func.attr}")
    return found


def test_the_dict_write_check_finds_each_form():
    source = ("def f(a):\n"
              "    a.__dict__['x'] = 1\n"
              "    a.__dict__.update(y=2)\n"
              "    a.__dict__.setdefault('z', 3)\n"
              "    return a.__dict__.get('x')\n")
    assert len(dict_writes(source)) == 3


def test_no_module_of_the_package_writes_into_an_objects_dict():
    found = {module: writes for module in PACKAGE_MODULES
             if (writes := dict_writes((PACKAGE / module).read_text()))}
    assert found == {}


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
