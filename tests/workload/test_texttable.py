"""Compressed text tables (snficon/workload/texttable.py)."""

from __future__ import annotations

from snficon.workload.texttable import BLOCK_TEXTS, TextList, TextTableBuilder


def texts(count):
    return [f'{{"id": {i}, "name": "n{"é" * (i % 5)}"}}' * (1 + i % 3) for i in range(count)]


def test_every_text_reads_back_in_any_order():
    items = texts(3 * BLOCK_TEXTS + 5)
    builder = TextTableBuilder()
    for text in items:
        builder.add(text)
    table = builder.build()
    assert len(table) == len(items) and len(table.blocks) == 4
    order = list(range(len(items)))
    assert [table[i] for i in order] == items
    assert [table[i] for i in reversed(order)] == items[::-1]
    assert [table[i] for i in order[::7]] == items[::7]


def test_blocks_are_compressed_and_a_full_last_block_is_not_repeated():
    builder = TextTableBuilder()
    for text in texts(2 * BLOCK_TEXTS):
        builder.add(text)
    table = builder.build()
    assert len(table.blocks) == 2
    assert sum(map(len, table.blocks)) < sum(len(t.encode()) for t in texts(2 * BLOCK_TEXTS)) / 2


def test_an_empty_table_and_a_text_list():
    assert len(TextTableBuilder().build()) == 0
    listed = TextList()
    for text in texts(40):
        listed.add(text)
    assert [listed.raw(i) for i in range(40)] == [t.encode() for t in texts(40)]
    table = listed.table()
    assert [table[i] for i in range(40)] == texts(40)
