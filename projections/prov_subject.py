"""Some events of the log as PROV-O: what ``writegate export subject --format prov`` hands
a person with the document about them.

The same mapping as the PROV-O projection (``projections.prov``): each event's lines are
``projections.prov_triples.Lines``, so the subject's versions, activities, agents, sources
and observations have the IRIs and terms the projection gives them, and a reader can join
the two. Only the events given are mapped (a subject export's ``event_seqs``), each shared
resource typed and labelled once.
"""

from __future__ import annotations

from collections.abc import Iterable

from rdflib import Graph
from rdflib.namespace import PROV

from writegate.eventlog import EventCore
from writegate.projections.prov import WG
from writegate.projections.prov_triples import Lines


def prov_graph(events: Iterable[EventCore]) -> Graph:
    """The events' PROV-O, oldest first (a write a reviewer approved names the approval
    when both are given)."""
    lines: list[str] = []
    declared: set[str] = set()

    def declare(resource: str) -> bool:
        first = resource not in declared
        declared.add(resource)
        return first

    informed_by: str | None = None
    for event in sorted(events, key=lambda e: e.seq):
        informed_by = Lines(lines, event, declare, informed_by).informed_by
    graph = Graph()
    graph.bind("prov", PROV)
    graph.bind("writegate", WG)
    graph.parse(data="".join(lines), format="nt")
    return graph


def prov_turtle(events: Iterable[EventCore]) -> bytes:
    """The events' PROV-O as Turtle."""
    return prov_graph(events).serialize(format="turtle").encode()
