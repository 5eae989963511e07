"""How common a person's name is among its label's nodes: whether an equal name can tell
who is meant.

A name alone lands a write only if it identifies. Two "Michael Becker"s are as likely two
people as one where many of the label's nodes are Michaels and many are Beckers, however
rare the whole name is in the graph so far: people's names are drawn from shared pools of
given names and surnames, so namesakes are in their nature (an organisation's name, or a
title, is made to tell it apart, and its words past the two its index rows keep carry that;
this is not asked of them). So when — and only when — a person's name alone would land a
write, the words leading its index rows (its last word and its first, unless an initial:
``blocking.person_leads``) are counted among the label's nodes: the rows of each word's sound
are read, at most ``CAP`` of them, and the nodes whose name holds the word counted (a
creating write, and the index, do nothing more). From the counts, the namesakes another
person of the name would have by chance are estimated the Fellegi-Sunter way, the words
independent (as splink's term frequencies are): of the label's other ``n - 1`` nodes,
``(n - 1) * prod((c - 1) / (n - 1))`` are expected to share them, ``c`` the nodes holding a
word, the candidate itself not counted; one word no other node holds makes the name
identify. The write is the candidate with probability ``1 / (1 + namesakes)``; below the
label's ``auto_threshold``, the pair is asked about, never landed (``name_common``).
"""

from __future__ import annotations

from collections.abc import Sequence

from writegate.eventlog.sql import Sql
from writegate.gate.resolution.normalize import NormalizedName
from writegate.gate.resolution.vetoes import VETO_REASONS
from writegate.gate.schema.document import ResolutionDoc
from writegate.projections.state import StateReader
from writegate.projections.state.blocking import SEP, holders, person_leads, sound

CAP = 500
"""Index rows read a word at most: a word more nodes hold counts as held by this many, so
two such words still make a name common in a graph of up to (CAP - 1)² / 0.02, about 12
million nodes, at the default ``auto_threshold``; the read stays bounded at any size."""


def namesakes(population: int, held: Sequence[int]) -> float:
    """The other nodes of a label of ``population`` expected to share a name's words by
    chance, ``held``: how many nodes hold each word (the candidate among them)."""
    others = population - 1
    if others < 1 or not held:
        return 0.0
    expected = float(others)
    for count in held:
        expected *= max(count - 1, 0) / others
    return expected


def identifies(expected: float, auto_threshold: float) -> bool:
    """Whether a name with ``expected`` namesakes is the candidate's at ``auto_threshold``."""
    return 1.0 / (1.0 + expected) >= auto_threshold


def unidentifying(
    state: StateReader, conn: Sql, label: str, written: NormalizedName, rules: ResolutionDoc
) -> str | None:
    """Why ``written`` alone may not land a write on a node of ``label`` (None: it
    identifies, or it names no person)."""
    words = written.tokens
    if rules.kind != "person" or not words:
        return None
    family, leads = person_leads(words)
    held = [
        holders(conn, f"{label}/{family}:{sound(word)}{SEP}", word, CAP)
        for word in dict.fromkeys(leads)
    ]
    expected = namesakes(state.counts(conn).labels.get(label, 0), held)
    if identifies(expected, rules.auto_threshold):
        return None
    return (
        f"never auto-resolves: {VETO_REASONS['name_common']} (about {expected:.2f} other "
        f"{label} nodes of this name to be expected by chance)"
    )
