"""Many short texts kept compressed, read back one at a time.

A packed workload (:mod:`snficon.workload.packed`) keeps the JSON text of
every job and profile; as Python strings that is some 250 bytes a job. A
:class:`TextTable` keeps them zlib-compressed in blocks of a few dozen
(about 65 bytes a job for the project's Markovian workloads) and decompresses
one block when one of its texts is read.
"""

from __future__ import annotations

import zlib
from array import array
from dataclasses import dataclass, field

import numpy as np

#: Texts compressed together in one block of a :class:`TextTable`.
BLOCK_TEXTS = 32


@dataclass(eq=False)
class TextTable:
    """Many short texts, compressed (zlib) in blocks of :data:`BLOCK_TEXTS`.

    Text ``i`` is in block ``i // BLOCK_TEXTS``, between the ends of the texts
    before it in that block (``ends``, offsets within the block). The last
    block read is kept decompressed, with its texts' offsets as a list, so
    reading in order costs one decompression per block.
    """

    blocks: list[bytes]
    ends: np.ndarray
    #: The last block read: its number, its bytes and where each of its texts starts
    #: and ends (one more offset than texts).
    _cached: tuple[int, bytes, list[int]] = (-1, b"", [])

    def __len__(self) -> int:
        return len(self.ends)

    def __getitem__(self, index: int) -> str:
        block, first = divmod(index, BLOCK_TEXTS)
        cached_block, data, bounds = self._cached
        if cached_block != block:
            data = zlib.decompress(self.blocks[block])
            start = block * BLOCK_TEXTS
            bounds = [0, *self.ends[start:start + BLOCK_TEXTS].tolist()]
            self._cached = (block, data, bounds)
        return data[bounds[first]:bounds[first + 1]].decode("utf-8")


@dataclass(eq=False)
class TextTableBuilder:
    """Collects texts one at a time for a :class:`TextTable`, compressing each block
    as soon as it is full."""

    blocks: list[bytes] = field(default_factory=list)
    pending: bytearray = field(default_factory=bytearray)
    #: Each text's end within its block.
    ends: array = field(default_factory=lambda: array("q"))

    def __len__(self) -> int:
        return len(self.ends)

    def add(self, text: str | bytes) -> None:
        """Append a text (a string, or its UTF-8 bytes)."""
        self.pending += text.encode("utf-8") if isinstance(text, str) else text
        self.ends.append(len(self.pending))
        if len(self.ends) % BLOCK_TEXTS == 0:
            self._close_block()

    def _close_block(self) -> None:
        self.blocks.append(zlib.compress(bytes(self.pending), 1))
        self.pending = bytearray()

    def build(self) -> TextTable:
        """The table of the texts added."""
        if self.pending or len(self.ends) % BLOCK_TEXTS:
            self._close_block()
        ends = np.array(self.ends, dtype=np.int64)
        if not len(ends) or ends.max() < 2**31:
            ends = ends.astype(np.int32)
        return TextTable(self.blocks, ends)


@dataclass(eq=False)
class TextList:
    """Texts one after another in one uncompressed buffer, to compare them as they come."""

    data: bytearray = field(default_factory=bytearray)
    ends: array = field(default_factory=lambda: array("q"))

    def __len__(self) -> int:
        return len(self.ends)

    def add(self, text: str) -> None:
        self.data += text.encode("utf-8")
        self.ends.append(len(self.data))

    def raw(self, index: int) -> bytes:
        """Text ``index`` as UTF-8 bytes."""
        return bytes(self.data[self.ends[index - 1] if index else 0:self.ends[index]])

    def table(self) -> TextTable:
        """The same texts as a compressed :class:`TextTable`."""
        builder = TextTableBuilder()
        for index in range(len(self.ends)):
            builder.add(self.raw(index))
        return builder.build()
