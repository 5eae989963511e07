"""How many nodes of a label hold each value of a field it weighs as evidence: the
frequencies entity resolution reads ``u`` from (``gate.resolution.evidence``).

Counted from the resolution keys each ``node.written`` event carries, for nodes carrying
the label's evidence marker (``Label/ev:``, a label that declares evidence fields): one
row per counted key —

* ``Label/ev:`` the label's nodes; ``Label/name=text`` those of one normal name;
* ``Label/ev:field=value`` and ``Label/id:prop=value`` those holding one value, and
  ``Label/ev:field`` and ``Label/id:prop`` those holding the field at all.

Updated in the writing transaction as a node's keys change (the difference of its old and
new counted keys, so an event applied again changes nothing) and rebuilt by replay; read a
primary-key probe per value.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from writegate.eventlog.sql import Sql, inserted
from writegate.projections.state.blocking import text_of

MARKER = "ev:"
_CHUNK = 500


def counted(keys: Iterable[str]) -> set[str]:
    """The count rows a node of ``keys`` adds one to (none without the evidence marker)."""
    keys = list(keys)
    label = next((k.partition("/")[0] for k in keys if k.partition("/")[2] == MARKER), None)
    if label is None:
        return set()
    rows = {f"{label}/{MARKER}"}
    for key in keys:
        body = key.partition("/")[2]
        if body.startswith(("ev:", "id:")) and "=" in body:
            rows.update({key, key.partition("=")[0]})
        elif (text := text_of(key)) is not None:
            rows.add(f"{label}/name={text}")
    return rows


def rekey(conn: Sql, keys: Iterable[str], old: Iterable[str]) -> None:
    """Count a node under ``keys`` instead of ``old``, the keys its row listed (none
    for a node first written — or, its event applied again, exactly these)."""
    new, before = counted(keys), counted(old)
    if not new and not before:  # a label that weighs no evidence: nothing counted
        return
    delta = Counter(dict.fromkeys(new - before, 1))
    delta.update(dict.fromkeys(before - new, -1))
    if not delta:
        return
    inserted(  # on PostgreSQL held, to go with the append's other rows as one statement
        conn,
        "INSERT INTO state_value_counts (key, count) VALUES (?, ?) ON CONFLICT (key) "
        "DO UPDATE SET count = state_value_counts.count + excluded.count",
        sorted(delta.items()),
    )
    gone = [(key,) for key, step in delta.items() if step < 0]
    if gone:
        conn.executemany("DELETE FROM state_value_counts WHERE key = ? AND count <= 0", gone)


def value_counts(conn: Sql, keys: Iterable[str]) -> dict[str, int]:
    """The counts of ``keys`` (absent: none)."""
    wanted = sorted(set(keys))
    found: dict[str, int] = {}
    for start in range(0, len(wanted), _CHUNK):
        chunk = wanted[start : start + _CHUNK]
        marks = ",".join("?" * len(chunk))
        for key, count in conn.execute(
            f"SELECT key, count FROM state_value_counts WHERE key IN ({marks})", chunk
        ):
            found[str(key)] = int(count)
    return found
