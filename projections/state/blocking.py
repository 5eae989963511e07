"""The layout of the resolution index's keys, owned with the table they fill.

A row key is ``family:LEAD|i|OTHER|text``: the sound of a leading word, the first letter and
the sound of a second word, then the name's normal text. Sorted, rows of one lead sound and
one second word sit together, ordered by that word's sound and then the text, so a probe is
a bounded range (``key >= start AND key < stop LIMIT n``): the same normal text first, then
names whose second word sounds alike. The text also lets the gate score a candidate without
reading its node or normalizing its name again.

The gate computes row keys (``gate.resolution.keys``) and each ``node.written`` event
carries them; the state model indexes them as they are. Events written before this layout
(7) carry the earlier keys (``x:`` the sorted words, ``p:TRNK|a`` …), which no probe of
this layout meets: ``from_legacy`` rebuilds rows of this layout from them, so a read model
rebuilt from an older log (``StateProjection.install`` does so when the layout changes)
indexes every node the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache
from itertools import permutations

import jellyfish
import orjson

from writegate.eventlog.sql import Sql, has_column

Probe = tuple[tuple[str, str, bool], ...]
"""Key ranges ``(start, stop, descending)`` read at once: one new name's candidates."""

SEP = "|"
FAMILIES = ("p", "m", "o", "j", "a")
"""p: a person's two words; m: a person of one word; o: an organisation's distinctive
words; j: all words joined; a: an acronym. ``id:`` keys (identity properties) are equal
values, not rows of this shape."""
JOINED_LENGTH = 12
"""``j:`` keys keep the first sounds of a long name only: keys stay short."""
ORDERED_WORDS = 6
"""``from_legacy`` puts back the order of names this long at most (720 orders to try)."""


@lru_cache(maxsize=65_536)
def sound(word: str) -> str:
    """The word's Metaphone code, any leading vowel or Y read as "A" ("Osama"/"Usama",
    "Yeltsin"/"Eltsin"); the word itself where Metaphone has nothing to say (digits, other
    scripts), so a key is never empty."""
    code = jellyfish.metaphone(word) if word.isascii() and word.isalpha() else ""
    if not code:
        return word
    return "A" + code[1:] if code[0] in "AEIOUY" else code


def block(family: str, lead: str, initial: str) -> str:
    """The start of the rows led by ``lead`` whose second word begins with ``initial`` ("" for
    none): the block a probe reads around."""
    return f"{family}:{sound(lead)}{SEP}{initial}{SEP}"


def row(family: str, lead: str, other: str, text: str) -> str:
    """The row key of ``lead`` followed by ``other`` (an initial has no sound; "" for none)."""
    tail = sound(other) if len(other) > 1 else ""
    return f"{block(family, lead, other[:1])}{tail}{SEP}{text}"


def flat_row(family: str, value: str, text: str) -> str:
    """The row key of a value with no words in it (``j:`` a joined sound, ``a:`` an acronym);
    with no ``text``, the start every row of that value shares."""
    return f"{family}:{value}{SEP * 3}{text}"


def joined_sound(joined: str) -> str:
    """The ``j:`` value of a name's words joined: their first sounds only, so keys stay short."""
    return sound(joined)[:JOINED_LENGTH]


def text_of(key: str) -> str | None:
    """The normal text a row key ends with (None for an ``id:`` key, whatever its value
    holds)."""
    body = key.partition("/")[2]
    parts = body.split(SEP, 3)
    return parts[3] if len(parts) == 4 and not body.startswith("id:") else None


def after(prefix: str) -> str:
    """The least string greater than every string starting with ``prefix``."""
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)


def from_legacy(keys: Iterable[str]) -> list[str]:
    """Row keys of this layout for a node indexed before it (``x:`` and ``p:TRNK|a`` keys),
    as the gate would compute them from the words the ``x:`` key kept, in the name's order
    (``_in_order``). Keys already of this layout, and ``id:`` keys, are kept as they are."""
    keys = sorted(set(keys))
    exact = [k for k in keys if k.partition("/")[2].startswith("x:")]
    if not exact:
        return keys
    label, _, body = exact[0].partition("/")
    bodies = [k.partition("/")[2] for k in keys]
    words = _in_order(body[2:].split(), bodies)
    kept = [k for k in keys if k.partition("/")[2].startswith("id:")]
    text = " ".join(words)
    rows: set[str] = set()
    if any(b.startswith(("o:", "a:")) for b in bodies):  # an organisation's keys
        leads = {b[2:].split(SEP)[0] for b in bodies if b.startswith("o:")}
        distinctive = [w for w in words if sound(w) in leads] or words
        rows.update(organisation_rows(distinctive, text))
        rows.update(flat_row(b[0], b[2:], text) for b in bodies if b.startswith(("j:", "a:")))
    elif words:
        rows.update(person_rows(words, text))
    return sorted({*kept, *(f"{label}/{r}" for r in rows)})


def _in_order(words: list[str], bodies: list[str]) -> list[str]:
    """The words in the name's own order: the old exact key sorted them, but its ``j:`` key
    is the sound of the words joined in order. Where several orders sound alike, the one
    the old first-word key (``p:ALN|t``: the first word's sound, the last word's initial)
    agrees with; the sorted words where no order fits (no ``j:`` key, or a longer name)."""
    joined = next((b[2:].split(SEP)[0] for b in bodies if b.startswith("j:")), None)
    if joined is None or len(words) > ORDERED_WORDS:
        return words
    fits = [
        order
        for order in dict.fromkeys(permutations(words))
        if joined_sound("".join(order)) == joined
    ]
    agreeing = [o for o in fits if f"p:{sound(o[0])}{SEP}{o[-1][0]}" in bodies]
    return list((agreeing or fits or [tuple(words)])[0])


def person_leads(words: Sequence[str]) -> tuple[str, list[str]]:
    """The family of a person's rows and the words leading them: one word alone (``m``),
    else the last word and then the first, unless an initial (``p``)."""
    if len(words) == 1:
        return "m", [words[0]]
    return "p", [words[-1], *([words[0]] if len(words[0]) > 1 else [])]


def person_rows(words: list[str], text: str) -> set[str]:
    """A person's rows: each lead (``person_leads``) followed by the name's other end."""
    family, leads = person_leads(words)
    if family == "m":
        return {row("m", words[0], "", text)}
    others = (words[0], words[-1])  # the last word leads the first, the first the last
    return {row("p", lead, other, text) for lead, other in zip(leads, others, strict=False)}


def organisation_rows(distinctive: list[str], text: str) -> set[str]:
    """An organisation's rows: each of its first two distinctive words leading the other."""
    if len(distinctive) == 1:
        return {row("o", distinctive[0], "", text)}
    one, two = distinctive[:2]
    return {row("o", one, two, text), row("o", two, one, text)}


def holders(conn: Sql, prefix: str, word: str, cap: int) -> int:
    """The nodes whose name holds ``word`` among the first ``cap`` index rows led by one
    sound (``prefix``: ``Label/family:SOUND|``): how common a word is, in a bounded read."""
    rows = conn.execute(
        "SELECT key, identity FROM state_resolution_keys WHERE key >= ? AND key < ? LIMIT ?",
        (prefix, after(prefix), cap),
    )
    return len({identity for key, identity in rows if word in (text_of(str(key)) or "").split()})


def add_keys_column(conn: Sql) -> None:
    """``state_nodes.resolution_keys``, added to a read model made before it (rebuilt then)."""
    if not has_column(conn, "state_nodes", "resolution_keys"):
        conn.execute("ALTER TABLE state_nodes ADD COLUMN resolution_keys TEXT")


def stored_keys(text: str | None) -> list[str] | None:
    """The keys a node's row lists (None: none ever indexed)."""
    return [str(key) for key in orjson.loads(text)] if text is not None else None


def probed(keys: list[str] | None) -> list[str]:
    """The keys a probe may read: a name's rows and identity values. A node's evidence
    keys (``ev:``) are counted (``valuecounts``), never probed, so they are not indexed."""
    return [key for key in keys or () if not key.partition("/")[2].startswith("ev:")]


def drop_unprobed(conn: Sql) -> None:
    """Delete the evidence keys a read model before layout 22 indexed (once, on upgrade)."""
    conn.execute("DELETE FROM state_resolution_keys WHERE key LIKE '%/ev:%'")


def store_keys(conn: Sql, identity: str, old: list[str] | None, new: list[str] | None) -> None:
    """The node's rows in the index, from ``old`` to ``new`` (its row lists them; only the
    ``probed`` ones are indexed), each deleted or inserted by its own key — the index has
    no second index by node. Inserting skips a row there already (an event applied again,
    at-least-once)."""
    old, new = probed(old), probed(new)
    wanted = set(new or ())
    gone = [(key, identity) for key in old or () if key not in wanted]
    if gone:
        conn.executemany("DELETE FROM state_resolution_keys WHERE key = ? AND identity = ?", gone)
    if new:
        conn.executemany(
            "INSERT INTO state_resolution_keys (key, identity) VALUES (?, ?) "
            "ON CONFLICT DO NOTHING",
            [(key, identity) for key in new],
        )


@lru_cache(maxsize=256)
def _probe_sql(directions: tuple[bool, ...]) -> str:
    """One bounded range read a direction, joined (SQLite and PostgreSQL both run it)."""
    return " UNION ALL ".join(
        "SELECT * FROM (SELECT key, identity FROM state_resolution_keys "
        f"WHERE key >= ? AND key < ? ORDER BY key{' DESC' if descending else ''} LIMIT ?) AS r{i}"
        for i, descending in enumerate(directions)
    )


def probe_statement(
    ranges: Sequence[tuple[str, str, bool]], limit: int
) -> tuple[str, list[str | int]]:
    """The statement reading at most ``limit`` rows of each range, and its parameters."""
    params: list[str | int] = []
    for start, stop, _ in ranges:
        params += (start, stop, limit)
    return _probe_sql(tuple(descending for _, _, descending in ranges)), params


def past_namesakes(
    conn: Sql, ranges: Sequence[tuple[str, str, bool]], rows: list[tuple[str, str]], limit: int
) -> list[tuple[str, str]]:
    """``rows`` (a probe of ``ranges``, at most ``limit`` a range) with each range read on
    past keys its rows repeat, until it has met ``limit`` names: nodes sharing a name
    (namesakes, duplicates written as new) take one place of a range, not every place, so
    the next name along is still met. Most probes repeat no key and read nothing more; one
    that does reads at most ``limit`` more bounded ranges."""
    if len({key for key, _ in rows}) == len(rows):  # most probes: no name repeats
        return rows
    out = list(rows)
    held = set(out)
    for start, stop, descending in ranges:
        window = sorted((r for r in out if start <= r[0] < stop), reverse=descending)[:limit]
        names = {key for key, _ in window}
        for _ in range(limit):
            if len(window) < limit or len(names) >= limit:
                break
            last = window[-1][0]
            lo, hi = (start, last) if descending else (last + "\x01", stop)
            sql, params = probe_statement(((lo, hi, descending),), limit)
            window = [(row[0], row[1]) for row in conn.execute(sql, params)]
            names.update(key for key, _ in window)
            out += [r for r in window if r not in held]
            held.update(window)
    return out
