"""Pictures of the graph: a ``Subgraph`` (what the reads return) as GraphML, DOT or Mermaid.

The reads decide what is in the picture (``GraphReader.neighbors`` around a node, or
``whole_graph``), so a picture shows exactly what an agent reading the same question
sees. ``networkx`` holds the graph and writes GraphML; DOT goes through ``pydot`` (via
``networkx.nx_pydot``); Mermaid, which no well-kept Python library writes, is a flowchart
printed here. DOT and Mermaid name nodes ``n1``, ``n2``, … and carry the text as labels,
quoted by this module: identities hold quotes, braces and colons, which pydot would take
for ports and which it does not escape.
"""

from __future__ import annotations

import io
from typing import Any, Literal

import networkx as nx
import orjson

from writegate.gate.reads.views import Provenance, Subgraph
from writegate.language import node_identity

Picture = Literal["dot", "graphml", "mermaid"]
PICTURES: tuple[Picture, ...] = ("dot", "graphml", "mermaid")


def _text(value: Any) -> str:
    return value if isinstance(value, str) else orjson.dumps(value).decode()


def _json(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def to_networkx(subgraph: Subgraph) -> nx.MultiDiGraph[str]:
    """Nodes keyed by identity, edges keyed by type; every attribute a scalar (GraphML
    allows no others), keys and properties as JSON text."""
    graph: nx.MultiDiGraph[str] = nx.MultiDiGraph()
    for node in subgraph.nodes:
        graph.add_node(
            node_identity(node.label, node.merge_keys),
            label=node.label,
            keys=_json(node.merge_keys),
            properties=_json(node.properties),
            stub=node.stub,
            caption="\n".join(
                [node.label, *(f"{k}: {_text(v)}" for k, v in node.merge_keys.items())]
            ),
            **_provenance(node.provenance),
        )
    for edge in subgraph.edges:
        graph.add_edge(
            node_identity(edge.from_node.label, edge.from_node.merge_keys),
            node_identity(edge.to_node.label, edge.to_node.merge_keys),
            key=edge.type,
            type=edge.type,
            properties=_json(edge.properties),
            **_provenance(edge.provenance),
        )
    return graph


def _provenance(provenance: Provenance) -> dict[str, Any]:
    return {
        "confidence": provenance.confidence,
        "source": provenance.source,
        "extraction_method": provenance.extraction_method,
        "agent": provenance.agent,
        "written_at": provenance.written_at,
        "seq": provenance.seq,
    }


def render(subgraph: Subgraph, picture: Picture) -> str:
    graph = to_networkx(subgraph)
    if picture == "graphml":
        buffer = io.BytesIO()
        nx.write_graphml(graph, buffer)
        return buffer.getvalue().decode()
    if picture == "dot":
        return _dot(graph)
    return _mermaid(graph)


def _short_names(graph: nx.MultiDiGraph[str]) -> dict[str, str]:
    return {identity: f"n{i}" for i, identity in enumerate(graph.nodes, 1)}


def _quoted(text: str) -> str:
    """A DOT string: only ``"`` is an escape there, so ``\\`` is doubled for pydot's parser."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def _dot(graph: nx.MultiDiGraph[str]) -> str:
    names = _short_names(graph)
    drawn: nx.MultiDiGraph[str] = nx.MultiDiGraph(graph={"rankdir": "LR"}, node={"shape": "box"})
    for identity, data in graph.nodes(data=True):
        drawn.add_node(
            names[identity],
            label=_quoted(data["caption"]),
            identity=_quoted(identity),
            confidence=data["confidence"],
            **({"style": "dashed"} if data["stub"] else {}),
        )
    for start, end, rtype, data in graph.edges(keys=True, data=True):
        drawn.add_edge(
            names[start],
            names[end],
            key=rtype,
            label=_quoted(rtype),
            confidence=data["confidence"],
        )
    text: str = nx.nx_pydot.to_pydot(drawn).to_string()
    return text


_MERMAID_SPECIAL = frozenset('"#&<>|%`\\')


def mermaid_text(text: str) -> str:
    """Text inside a quoted Mermaid label: specials as ``#code;`` entities, lines as ``<br/>``."""
    lines = (
        "".join(f"#{ord(c)};" if c in _MERMAID_SPECIAL or ord(c) < 32 else c for c in line)
        for line in text.split("\n")
    )
    return "<br/>".join(lines)


def _mermaid(graph: nx.MultiDiGraph[str]) -> str:
    names = _short_names(graph)
    lines = ["flowchart LR"]
    stubs = []
    for identity, data in graph.nodes(data=True):
        lines.append(f'    {names[identity]}["{mermaid_text(data["caption"])}"]')
        if data["stub"]:
            stubs.append(names[identity])
    for start, end, rtype in graph.edges(keys=True):
        lines.append(f'    {names[start]} -->|"{mermaid_text(rtype)}"| {names[end]}')
    if stubs:
        lines += ["    classDef stub stroke-dasharray: 4 4", f"    class {','.join(stubs)} stub"]
    return "\n".join(lines) + "\n"
