"""Requests nested deeper than the JSON parsers on the way take, cut so they can be read.

The SDK's parsers stop at a depth (pydantic's ~250 on the 2025 HTTP wire and stdio, the
standard library's ~1,000 on the 2026 wire, orjson's 1,024): a call past it would be a
``-32700`` parse error with no id, which a client cannot match to its call. Cut at
``DEPTH`` instead — every object or list deeper replaced by ``null`` — the message parses,
keeps its id and tool name, and still nests deeper than any ``max_depth`` the gate allows
(``Limits.max_depth`` is at most 64), so the call gets the gate's own ``INVALID_ARGUMENT``
through the ordinary path (policy, metrics, the rejections table).

Only for a message the parser refused (both transports try it first), and then one pass
over the bytes, only when there are more brackets than ``DEPTH``: linear in the request's
size whatever its shape; an unterminated string stops the pass (the parser will call the
line what it is).
"""

from __future__ import annotations

import re

DEPTH = 128
# a whole string (possessive: nothing is re-tried), a bracket, or a quote that opens no
# complete string
_TOKENS = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"|[\[\]{}]|"')
_OPEN = frozenset(b"[{")
_QUOTE = ord('"')


def cut(raw: bytes, bound: int = DEPTH) -> bytes | None:
    """``raw`` with every object or list nested deeper than ``bound`` replaced by ``null``,
    or ``None`` when nothing there is that deep."""
    if raw.count(b"{") + raw.count(b"[") <= bound:
        return None
    parts: list[bytes] = []
    kept = 0  # raw[:kept] is in parts
    depth = 0
    cut_from = 0
    for token in _TOKENS.finditer(raw):
        first = raw[token.start()]
        if first == _QUOTE:
            if token.end() - token.start() == 1:
                break  # an unterminated string: not JSON, said by the parser
            continue
        if first in _OPEN:
            depth += 1
            if depth == bound + 1:
                cut_from = token.start()
        else:
            if depth == bound + 1:
                parts += (raw[kept:cut_from], b"null")
                kept = token.end()
            depth -= 1
    if not parts:
        return None
    parts.append(raw[kept:])
    return b"".join(parts)
