"""A history that exercises every projection path, written through the real gate (the one
``projections/contract_history.jsonl`` was recorded from), on a frozen clock; and a log of
odd names (``clashing_log``: shared names, several keys, quotes, non-ASCII) for renderers."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from freezegun import freeze_time

from writegate.eventlog import Actor
from writegate.gate import Gate

T0 = datetime(2032, 1, 1, 9, 0, tzinfo=UTC)
ADA = Actor(agent="ada-bot", session="s-ada", transport="mcp")
BOB = Actor(agent="bob-bot", session="s-bob", transport="http")


def prov(
    source: str = "https://example.org/team", method: str = "parsed", rel: float = 0.9
) -> dict[str, Any]:
    return {"source": source, "extraction_method": method, "reliability": rel}


def write_history(gate: Gate, step: Callable[[], None]) -> None:
    """Eleven steps of writes; ``step`` runs after each (tests move a frozen clock there)."""
    gate.write_node(
        actor=ADA,
        label="Person",
        merge_keys={"name": "Alice"},
        properties={"age": 30, "skills": ["go", "sql"]},
        **prov(),
    )
    step()
    gate.write_node(
        actor=BOB,
        label=":person",
        merge_keys={"name": "Bob"},
        properties={"age": 41},
        **prov("chat-2032-01-01", "llm", 0.6),
    )
    step()
    gate.write_node(
        actor=ADA,
        label="Organization",
        merge_keys={"name": "Initech"},
        properties={"kind": "company"},
        **prov(),
    )
    step()
    gate.write_relationship(
        actor=ADA,
        type="WORKS_FOR",
        from_label="Person",
        from_keys={"name": "Alice"},
        to_label="Organization",
        to_keys={"name": "Initech"},
        properties={"since": 2029},
        **prov(),
    )
    step()
    gate.write_relationship(
        actor=BOB,
        type="KNOWS",
        from_label="Person",
        from_keys={"name": "Bob"},
        to_label="Person",
        to_keys={"name": "Carol"},
        endpoint_policy="merge_endpoints",
        **prov("chat-2032-01-01", "llm", 0.6),
    )
    step()
    gate.write_node(
        actor=ADA,
        label="Person",
        merge_keys={"name": "Alice"},
        properties={"age": 31, "skills": None},
        **prov("hr.csv", "api", 1.0),
    )
    step()
    gate.write_node(
        actor=BOB,
        label="Gizmo",
        merge_keys={"name": "Widget"},
        properties={},
        **prov("chat-2032-01-01", "llm", 0.6),
    )
    step()
    gate.write_node(
        actor=ADA,
        label="Person",
        merge_keys={"name": "Carol"},
        properties={"age": 25},
        **prov(),
    )  # resolves the stub
    step()
    gate.write_batch(
        actor=ADA,
        items=[
            {"op": "write_node", "label": "Person", "merge_keys": {"name": "Dan"}, **prov()},
            {
                "op": "write_relationship",
                "type": "KNOWS",
                "from_label": "Person",
                "from_keys": {"name": "Dan"},
                "to_label": "Person",
                "to_keys": {"name": "Alice"},
                **prov(),
            },
        ],
    )
    step()
    gate.delete_relationship(
        actor=BOB,
        type="KNOWS",
        from_label="Person",
        from_keys={"name": "Bob"},
        to_label="Person",
        to_keys={"name": "Carol"},
        **prov("cleanup", "manual", 1.0),
    )
    step()
    gate.delete_node(
        actor=ADA,
        label="Person",
        merge_keys={"name": "Dan"},
        detach=True,
        **prov("cleanup", "manual", 1.0),
    )
    step()


def build_history(gate: Gate, minutes: int = 1) -> list[datetime]:
    """The history, one step a minute from T0 under freezegun; returns each step's time."""
    steps: list[datetime] = []
    with freeze_time(T0) as clock:

        def step() -> None:
            steps.append(datetime.now(UTC))
            clock.tick(timedelta(minutes=minutes))

        write_history(gate, step)
    return steps


COMMON: dict[str, Any] = {"source": "s", "extraction_method": "api", "reliability": 0.9}
CLASHES = {
    "name": "clashes",
    "nodes": {
        "Person": {"merge_keys": ["name"], "required": ["name"]},
        "Organization": {"merge_keys": ["name"], "required": ["name"]},
        "Account": {"merge_keys": ["bank", "number"], "required": ["bank", "number"]},
        "Tag": {"merge_keys": ["slug"], "required": ["slug"]},
    },
    "relationships": {
        "KNOWS": {"from": ["Person"], "to": ["Person", "Organization"]},
        "HOLDS": {"from": ["Person"], "to": ["Account"]},
    },
}


def clashing_log(gate: Gate) -> None:
    """Names two nodes share (qualified by label), multi-key and single-key nodes, a stub,
    a property removed, a node written twice in one batch, a detached deletion."""
    gate.publish_schema(CLASHES)
    node = {"op": "write_node", **COMMON}
    knows = {"op": "write_relationship", "type": "KNOWS", "from_label": "Person", **COMMON}
    assert (
        gate.write_batch(
            items=[
                {**node, "label": "Person", "merge_keys": {"name": "Acme"}, "properties": {"x": 1}},
                {**node, "label": "Organization", "merge_keys": {"name": "Acme"}},
                {**node, "label": "Account", "merge_keys": {"bank": "B", "number": 7}},
                {**node, "label": "Tag", "merge_keys": {"slug": 'zürich "quoted"'}},
                {
                    **node,
                    "label": "Person",
                    "merge_keys": {"name": "Acme"},
                    "properties": {"x": None, "likes": ["a", "b"], "ok": True, "r": 2.5},
                },
                {
                    **knows,
                    "from_keys": {"name": "Acme"},
                    "to_label": "Organization",
                    "to_keys": {"name": "Acme"},
                },
                {
                    **knows,
                    "from_keys": {"name": "Acme"},
                    "to_label": "Person",
                    "to_keys": {"name": "Stubby"},
                    "endpoint_policy": "merge_endpoints",
                },
                {**node, "label": "Person", "merge_keys": {"name": "Gone"}},
                {
                    **knows,
                    "from_keys": {"name": "Gone"},
                    "to_label": "Person",
                    "to_keys": {"name": "Acme"},
                },
                {
                    "op": "write_relationship",
                    "type": "HOLDS",
                    "from_label": "Person",
                    "from_keys": {"name": "Acme"},
                    "to_label": "Account",
                    "to_keys": {"bank": "B", "number": 7},
                    **COMMON,
                },
            ]
        ).status
        == "written"
    )
    deleted = gate.delete_node(label="Person", merge_keys={"name": "Gone"}, detach=True, **COMMON)
    assert deleted.status == "deleted", deleted
