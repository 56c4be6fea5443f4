"""How message texts, parts and native payloads are encoded for storage, and encodings made in advance.

Each encoding is a pure function of the values it is given and of a codec every connection can read (a
trained dictionary is never deleted): a text's SHA-256 and compressed form (the new texts of a prepared
batch compressed in blocks, inserted when the first of them is stored); a part's span of its
message's content and its raw JSON with that text cut out; a native payload with its message's shared
text (or a part's span of it) cut out, and the batch's payloads compressed in blocks (``blocks.py``).
``SqliteProjectStorage.prepare_writes`` computes them for the next batch before ``BEGIN IMMEDIATE``, so
an import holds the project's write lock for the SQL while another process prepares its own batch.
Inside the transaction every encoder looks its exact inputs up in ``Prepared`` first and computes what
is not there (a value nobody prepared), so the stored bytes are the same either way.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from lcm_framework.plugin_api.formats import NewMessage

from . import blocks
from .codec import BLOCK, MIN_BYTES, Codec
from .statements import chunks, marks

PartTail = tuple[Any, ...]
"""A part's ``(text_start, text_length, raw_text_at, raw_text_quoted, codec, text, raw_json)`` columns."""
PayloadCut = tuple[Any, ...]
"""A native payload's ``(rest, at, quoted, start, length)``: its text without the piece ``paste`` puts back
at ``at`` (None: nothing was cut out)."""


def digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


def _quoted(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def cut(value: str, text: str) -> tuple[str, int, int] | None:
    """``value`` without its first occurrence of ``text``, verbatim or else as a JSON string literal:
    ``(rest, at, quoted)``; None when it holds neither."""
    for quoted, form in ((0, text), (1, _quoted(text))):
        at = value.find(form)
        if at >= 0:
            return value[:at] + value[at + len(form):], at, quoted
    return None


def paste(rest: str, at: int, quoted: int, text: str) -> str:
    """The value ``cut`` took ``text`` out of."""
    return rest[:at] + (_quoted(text) if quoted else text) + rest[at:]


def _part(conn: sqlite3.Connection, codec: Codec, content: str, text: str | None, raw_json: str | None) -> PartTail:
    start = length = raw_at = quoted = None
    rest = raw_json
    if text is not None:
        found = content.find(text)
        if found >= 0:
            start, length = found, len(text)
        taken = cut(raw_json, text) if raw_json is not None and text else None
        if taken is not None:
            rest, raw_at, quoted = taken
    stored_text = None if start is not None else text
    name, (text_value, raw_value) = codec.encode_many(conn, (stored_text, rest))
    return start, length, raw_at, quoted, name, text_value, raw_value


def _payload(payload: str, text: str | None, spans: Sequence[tuple[int, int]]) -> PayloadCut:
    if text is not None:
        for start, length in [(0, len(text)), *sorted(spans, key=lambda span: -span[1])]:
            if length < MIN_BYTES:
                break
            taken = cut(payload, text[start:start + length])
            if taken is not None:
                whole = start == 0 and length == len(text)
                return taken[0], taken[1], taken[2], None if whole else start, None if whole else length
    return payload, None, None, None, None


def is_shared(text: str) -> bool:
    """Whether ``text`` is stored in ``texts`` rather than in the message row."""
    return len(text) >= MIN_BYTES


class Prepared:
    """Encodings by their exact inputs: made by ``prepare`` ahead of a transaction, or on demand.

    The transaction is handed the very string objects ``prepare`` saw, so entries are found by identity
    (hashing long texts by value cost more than a lookup saved) and keep their inputs: an entry serves
    only the same inputs (a text equal to the prepared one by value counts), anything else is encoded
    when asked for."""

    __slots__ = ("_alone", "_blocks", "_digests", "_parts", "_payloads", "_text_blocks", "_texts", "_texts_in")

    def __init__(self) -> None:
        self._digests: dict[int, tuple[str, bytes]] = {}
        self._texts: dict[bytes, tuple[str | None, Any]] = {}
        self._parts: dict[tuple[int, int, int], tuple[str, str | None, str | None, PartTail]] = {}
        self._payloads: dict[int, tuple[str, str | None, tuple[tuple[int, int], ...], PayloadCut]] = {}
        self._blocks: dict[tuple[int, ...], tuple[list[str], tuple[str, bytes, list[bytes]]]] = {}
        self._alone: dict[int, tuple[str, tuple[str | None, Any]]] = {}
        self._text_blocks: list[list[Any]] = []
        """Each prepared block of texts: ``[codec, data, block id once inserted]``."""
        self._texts_in: dict[bytes, tuple[int, bytes]] = {}
        """A prepared text's digest: its block (index in ``_text_blocks``) and span there (``codec.REF``)."""

    def prepare(self, conn: sqlite3.Connection, codec: Codec, messages: Iterable[NewMessage],
                payloads: Iterable[tuple[str, NewMessage | None]]) -> None:
        """Encode what inserting ``messages`` and native records with ``payloads`` (linked to those
        messages) will need, as ``SqliteConversations`` and ``SqliteNativeTranscripts`` will ask for it."""
        messages = list(messages)
        stored = self._stored(conn, [m.content for m in messages if is_shared(m.content)])
        spans: dict[int, tuple[tuple[int, int], ...]] = {}
        new: dict[bytes, str] = {}
        for message in messages:
            content = message.content
            if is_shared(content) and self.digest(content) not in stored:
                new.setdefault(self.digest(content), content)
            found = [self.part(conn, codec, content, part.text, part.raw_json) for part in message.parts]
            spans[id(message)] = tuple((tail[0], tail[1]) for tail in found
                                       if tail[0] is not None and tail[1] >= MIN_BYTES)
        rests = []
        for payload, linked in payloads:
            text = linked.content if linked is not None and is_shared(linked.content) else None
            rests.append(self.payload(payload, text, spans.get(id(linked), ()) if text is not None else ())[0])
        self._prepare_texts(conn, codec, list(new.values()))
        for group in blocks.groups(rests):
            if len(group) >= blocks.MIN_VALUES:
                self.block(conn, codec, [rests[index] for index in group])
            else:
                for index in group:
                    self.alone(conn, codec, rests[index])

    def _prepare_texts(self, conn: sqlite3.Connection, codec: Codec, values: Sequence[str]) -> None:
        for group in blocks.groups(values):
            if len(group) < blocks.MIN_VALUES:
                for index in group:
                    self.encoded(conn, codec, values[index])
                continue
            name, data, refs = codec.encode_block(conn, [values[index] for index in group])
            self._text_blocks.append([name, data, None])
            for index, ref in zip(group, refs, strict=True):
                self._texts_in[self.digest(values[index])] = (len(self._text_blocks) - 1, ref)

    def _stored(self, conn: sqlite3.Connection, texts: Sequence[str]) -> set[bytes]:
        """The digests of those ``texts`` the project already stores (they will not be compressed again)."""
        keys = list({self.digest(text) for text in texts})
        found: set[bytes] = set()
        for group in chunks(keys):
            found.update(row[0] for row in conn.execute(
                f"SELECT sha256 FROM texts WHERE sha256 IN ({marks(group)})", group))
        return found

    def digest(self, text: str) -> bytes:
        hit = self._digests.get(id(text))
        if hit is not None and hit[0] is text:
            return hit[1]
        found = digest(text)
        self._digests[id(text)] = (text, found)
        return found

    def encoded(self, conn: sqlite3.Connection, codec: Codec, text: str) -> tuple[str | None, Any]:
        """A shared text's ``(codec, data)`` in ``texts``."""
        key = self.digest(text)
        found = self._texts.get(key)
        if found is None:
            name, (data,) = codec.encode_many(conn, [text], sample=True)
            found = self._texts[key] = (name, data)
        return found

    def text_data(self, conn: sqlite3.Connection, codec: Codec, text: str) -> tuple[str | None, Any]:
        """A shared text's new ``(codec, data)`` in ``texts``: in its prepared block (inserted with the first
        of its texts stored), else compressed alone."""
        hit = self._texts_in.get(self.digest(text))
        if hit is None:
            return self.encoded(conn, codec, text)
        block = self._text_blocks[hit[0]]
        if block[2] is None:
            block[2] = blocks.insert(conn, block[0], block[1])
        return BLOCK, blocks.text_ref(block[2], hit[1])

    def part(self, conn: sqlite3.Connection, codec: Codec, content: str, text: str | None,
             raw_json: str | None) -> PartTail:
        """The stored columns of a part of a message whose content is ``content``."""
        key = (id(content), id(text), id(raw_json))
        hit = self._parts.get(key)
        if hit is not None and hit[0] is content and hit[1] is text and hit[2] is raw_json:
            return hit[3]
        found = _part(conn, codec, content, text, raw_json)
        self._parts[key] = (content, text, raw_json, found)
        return found

    def payload(self, payload: str, text: str | None, spans: Sequence[tuple[int, int]]) -> PayloadCut:
        """A native payload without its message's shared text (None: none) or the first of the spans of
        that text its parts hold (in the order they are tried) that it contains."""
        tried = tuple(spans) if text is not None else ()
        hit = self._payloads.get(id(payload))
        if hit is not None and hit[0] is payload and hit[1] == text and hit[2] == tried:
            return hit[3]
        found = _payload(payload, text, tried)
        self._payloads[id(payload)] = (payload, text, tried, found)
        return found

    def block(self, conn: sqlite3.Connection, codec: Codec, values: Sequence[str]) -> tuple[str, bytes, list[bytes]]:
        """``values`` compressed as one block (``Codec.encode_block``)."""
        key = tuple(map(id, values))
        hit = self._blocks.get(key)
        if hit is not None and all(a is b for a, b in zip(hit[0], values, strict=True)):
            return hit[1]
        found = codec.encode_block(conn, values)
        self._blocks[key] = (list(values), found)
        return found

    def alone(self, conn: sqlite3.Connection, codec: Codec, value: str) -> tuple[str | None, Any]:
        """A native payload's rest compressed on its own (a batch with too few for a block)."""
        hit = self._alone.get(id(value))
        if hit is not None and hit[0] is value:
            return hit[1]
        name, (data,) = codec.encode_many(conn, (value,), sample=True)
        self._alone[id(value)] = (value, (name, data))
        return name, data
