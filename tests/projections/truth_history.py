"""The history ``projections/contract_history_truth.jsonl`` was recorded from: every event
type the gate writes beyond 0.1 — supersessions (a property, a functional relationship),
valid time, a write held for review then approved and another rejected, entity resolution
landing a write on an existing node, a merge and its undoing, a detached deletion, an
observation and the writes citing it, feedback on an answer, a fact said again (unchanged,
and corroborated), resolution switched on for a label with nodes, a property kept out of
the text index, a source taken back and put back — written through the real gate, a step a minute on a frozen clock.

Recorded once (``python -m tests.projections.truth_history FILE``; steps added later are
appended with ``--extend FILE STEP``, so the events recorded before keep their ids), shipped
with the package,
and replayed by the projector contract: the stored rows, not this code, are the contract's
input, so the events keep their hashes and ids. ``tests/projections/test_truth_history.py``
checks that the recording covers the whole event language and verifies.
"""

from __future__ import annotations

import copy
import sys
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
from freezegun import freeze_time

from writegate.eventlog import Actor
from writegate.eventlog.tables import EVENT_COLUMNS
from writegate.gate import EdgeKey, Gate, ObservationResult
from writegate.gate.retraction import RetractResult
from writegate.language import node_identity
from writegate.projections.testing import history

T0 = datetime(2033, 3, 1, 9, 0, tzinfo=UTC)
ADA = Actor(agent="ada-bot", session="s-ada", transport="mcp")
BOB = Actor(agent="bob-bot", session="s-bob", transport="http")
REVIEWER = Actor(agent="rita-reviewer", session="s-rita", transport="cli")

SCHEMA: dict[str, Any] = {
    "name": "truth",
    "nodes": {
        "Person": {
            "merge_keys": ["name"],
            "properties": {
                "name": {"type": "string"},
                "role": {"type": "string", "conflict": "supersede"},
                "email": {"type": "string"},
            },
            "resolution": {"policy": "auto", "identity": ["email"]},
            "review_below": 0.3,
        },
        "Organization": {"merge_keys": ["name"], "conflict": "supersede"},
    },
    "relationships": {
        "WORKS_FOR": {
            "from": ["Person"],
            "to": ["Organization"],
            "functional": True,
            "conflict": "supersede",
        },
        "KNOWS": {"from": ["Person"], "to": ["Person"]},
    },
}


def prov(source: str = "hr.csv", method: str = "parsed", rel: float = 0.9) -> dict[str, Any]:
    return {"source": source, "extraction_method": method, "reliability": rel}


def _ok(result: Any) -> Any:
    assert result.status in ("written", "deleted", "merged", "unmerged", "proposed", "decided"), (
        result
    )
    return result


def write_truth_history(gate: Gate, step: Callable[[], None]) -> None:
    """Fourteen steps; ``step`` runs after each (the recorder moves a frozen clock there)."""
    gate.publish_schema(SCHEMA, actor=ADA)
    gate.refresh_schema_cache()
    step()
    person: dict[str, Any] = {"label": "Person", "actor": ADA}
    _ok(
        gate.write_node(
            **person,
            merge_keys={"name": "Grace Hopper"},
            properties={"role": "engineer", "email": "grace@navy.mil"},
            valid_from=datetime(2030, 1, 1, tzinfo=UTC),
            **prov(),
        )
    )
    step()
    _ok(
        gate.write_node(
            **person,
            merge_keys={"name": "Grace Hopper"},
            properties={"role": "rear admiral"},
            **prov("wiki", "llm", 0.7),
        )
    )
    step()
    for name in ("Navy", "Remington Rand"):
        _ok(gate.write_node(label="Organization", merge_keys={"name": name}, actor=ADA, **prov()))
    step()
    edge: dict[str, Any] = {
        "type": "WORKS_FOR",
        "from_label": "Person",
        "from_keys": {"name": "Grace Hopper"},
        "to_label": "Organization",
        "actor": ADA,
    }
    _ok(
        gate.write_relationship(
            **edge, to_keys={"name": "Navy"}, properties={"since": 1943}, **prov()
        )
    )
    step()
    _ok(
        gate.write_relationship(
            **edge,
            to_keys={"name": "Remington Rand"},
            valid_from=datetime(1949, 1, 1, tzinfo=UTC),
            **prov(),
        )
    )
    step()
    held = _ok(
        gate.write_node(
            label="Person",
            merge_keys={"name": "Howard Aiken"},
            actor=BOB,
            properties={"role": "professor"},
            **prov("chat", "llm", 0.2),
        )
    )
    step()
    _ok(gate.reviews.decide(held.proposal, "approve", REVIEWER, note="checked the faculty list"))
    step()
    doubtful = _ok(
        gate.write_node(
            label="Person",
            merge_keys={"name": "Grace Murray"},
            actor=BOB,
            **prov("chat", "llm", 0.2),
        )
    )
    step()
    _ok(gate.reviews.decide(doubtful.proposal, "reject", REVIEWER, note="her maiden name"))
    step()
    landed = _ok(
        gate.write_node(
            **person,
            merge_keys={"name": "grace  hopper"},
            properties={"email": "grace@navy.mil"},
            **prov(),
        )
    )
    assert landed.resolved_from is not None, landed
    step()
    _ok(gate.write_node(**person, merge_keys={"name": "Ada Lovelace"}, **prov()))
    _ok(
        gate.write_node(
            **person,
            merge_keys={"name": "Augusta Ada King"},
            properties={"role": "countess"},
            **prov(),
        )
    )
    _ok(
        gate.write_relationship(
            type="KNOWS",
            from_label="Person",
            from_keys={"name": "Augusta Ada King"},
            to_label="Person",
            to_keys={"name": "Grace Hopper"},
            actor=ADA,
            **prov(),
        )
    )
    step()
    merged = _ok(
        gate.merge_nodes(
            label="Person",
            survivor_keys={"name": "Ada Lovelace"},
            duplicate_keys={"name": "Augusta Ada King"},
            actor=REVIEWER,
            reason="the same countess",
            **prov("review", "manual", 1.0),
        )
    )
    step()
    _ok(
        gate.unmerge_nodes(
            merge=merged.merge,
            actor=REVIEWER,
            reason="kept apart after all",
            **prov("review", "manual", 1.0),
        )
    )
    step()
    _ok(
        gate.delete_node(
            label="Person",
            merge_keys={"name": "Howard Aiken"},
            detach=True,
            actor=ADA,
            **prov("cleanup", "manual", 1.0),
        )
    )
    step()
    for later in LATER_STEPS:
        later(gate, step)


def write_observations(gate: Gate, step: Callable[[], None]) -> None:
    """The steps added with observations: one kept (and kept again: nothing appended), then
    a node and a relationship written citing it."""
    chat = prov("chat", "llm", 0.7)
    heard: dict[str, Any] = {
        "text": "Grace said Ada Lovelace wrote the first program.",
        "session": "chat-9",
        **chat,
    }
    kept = gate.record_observation(actor=BOB, **heard)
    assert isinstance(kept, ObservationResult), kept
    assert gate.record_observation(actor=ADA, **heard) == kept.model_copy(
        update={"status": "unchanged"}
    )
    step()
    cited: dict[str, Any] = {"observations": [kept.observation_id], "actor": BOB, **chat}
    _ok(
        gate.write_node(
            label="Person",
            merge_keys={"name": "Ada Lovelace"},
            properties={"role": "programmer"},
            **cited,
        )
    )
    _ok(
        gate.write_relationship(
            type="KNOWS",
            from_label="Person",
            from_keys={"name": "Grace Hopper"},
            to_label="Person",
            to_keys={"name": "Ada Lovelace"},
            **cited,
        )
    )
    step()


def write_feedback(gate: Gate, step: Callable[[], None]) -> None:
    """The step added with feedback: an answer that used Ada Lovelace and Grace's KNOWS
    relationship to her, accepted."""
    used = EdgeKey.model_validate(
        {
            "sourceId": node_identity("Person", {"name": "Grace Hopper"}),
            "targetId": node_identity("Person", {"name": "Ada Lovelace"}),
            "relationshipName": "KNOWS",
        }
    )
    rated = gate.graph_improve(
        session_id="chat-9",
        outcome="accepted",
        used_node_ids=[node_identity("Person", {"name": "Ada Lovelace"})],
        used_edge_keys=[used],
        actor=BOB,
    )
    assert rated.status == "applied", rated
    step()


def write_corroborations(gate: Gate, step: Callable[[], None]) -> None:
    """The step added with corroboration: Grace's KNOWS relationship to Ada said again by
    its writer (unchanged: nothing appended), then by Ada's bot from another source, and
    Ada Lovelace said again from the navy's records (each a corroboration, no version)."""
    chat = prov("chat", "llm", 0.7)
    knows: dict[str, Any] = {
        "type": "KNOWS",
        "from_label": "Person",
        "from_keys": {"name": "Grace Hopper"},
        "to_label": "Person",
        "to_keys": {"name": "Ada Lovelace"},
    }
    assert gate.write_relationship(**knows, actor=BOB, **chat).status == "unchanged"
    heard = gate.write_relationship(**knows, actor=ADA, **prov("letters", "parsed", 0.8))
    assert heard.status == "corroborated", heard
    step()
    ada: dict[str, Any] = {"label": "Person", "merge_keys": {"name": "Ada Lovelace"}}
    again = gate.write_node(**ada, actor=ADA, properties={"role": "programmer"}, **prov("navy"))
    assert again.status == "corroborated", again
    step()


def write_resolution_switched_on(gate: Gate, step: Callable[[], None]) -> None:
    """The step added with indexing on a publish: the reviewer gives Organization
    resolution, so its two live nodes are indexed by the publish (``nodes.indexed``)."""
    schema = copy.deepcopy(SCHEMA)
    schema["nodes"]["Organization"]["resolution"] = {"policy": "propose", "kind": "organisation"}
    assert gate.publish_schema(schema, actor=REVIEWER).status == "published"
    gate.refresh_schema_cache()
    step()


def write_property_kept_out(gate: Gate, step: Callable[[], None]) -> None:
    """The step added with ``searchable: false``: the reviewer keeps a person's role out of
    the text index (``label.searchable``), and a new person's write says so."""
    schema = copy.deepcopy(SCHEMA)
    schema["nodes"]["Organization"]["resolution"] = {"policy": "propose", "kind": "organisation"}
    schema["nodes"]["Person"]["properties"]["role"]["searchable"] = False
    assert gate.publish_schema(schema, actor=REVIEWER).status == "published"
    gate.refresh_schema_cache()
    step()
    person = {"name": "Margaret Hamilton"}
    _ok(gate.write_node(label="Person", merge_keys=person, properties={"role": "lead"}, **prov()))
    step()


def write_retraction(gate: Gate, step: Callable[[], None]) -> None:
    """The step added with retraction: the reviewer takes back what the navy's records said
    (Ada Lovelace keeps her other support), then puts it back."""
    done = gate.retract(source="navy", reason="a misfiled record", actor=REVIEWER)
    assert isinstance(done, RetractResult), done
    assert done.retraction is not None
    step()
    assert gate.unretract(done.retraction, reason="refiled", actor=REVIEWER).status == "ok"
    step()


# steps added after the first recording, in order: ``--extend FILE NAME`` appends one
LATER_STEPS = (
    write_observations,
    write_feedback,
    write_corroborations,
    write_resolution_switched_on,
    write_property_kept_out,
    write_retraction,
)


def extend(path: Path, name: str) -> None:
    """Append the events of the later step ``name`` to the history at ``path``, a minute
    after its last: the events already recorded keep their ids and hashes."""
    [steps] = [s for s in LATER_STEPS if s.__name__ == name]
    columns = [c.strip() for c in EVENT_COLUMNS.split(",")]
    recorded = history(path)
    with (
        tempfile.TemporaryDirectory() as folder,
        freeze_time(recorded[-1].occurred_at + timedelta(minutes=1)) as clock,
        Gate.open(Path(folder) / "truth.db", default_actor=ADA) as gate,
    ):
        gate.log.append_existing(recorded)

        def step() -> None:
            clock.tick(timedelta(minutes=1))

        steps(gate, step)
        rows = gate.log.connection().execute(
            f"SELECT {EVENT_COLUMNS} FROM events WHERE seq > ? ORDER BY seq", (recorded[-1].seq,)
        )
        lines = [orjson.dumps(dict(zip(columns, row, strict=True))) for row in rows]
    with path.open("ab") as out:
        out.write(b"\n".join(lines) + b"\n")


def record(path: Path) -> None:
    """Write the history into a fresh log under a frozen clock; store its rows as JSON lines."""
    columns = [c.strip() for c in EVENT_COLUMNS.split(",")]
    with (
        tempfile.TemporaryDirectory() as folder,
        freeze_time(T0) as clock,
        Gate.open(Path(folder) / "truth.db", default_actor=ADA) as gate,
    ):

        def step() -> None:
            clock.tick(timedelta(minutes=1))

        write_truth_history(gate, step)
        conn = gate.log.connection()
        rows = conn.execute(f"SELECT {EVENT_COLUMNS} FROM events ORDER BY seq").fetchall()
    lines = [orjson.dumps(dict(zip(columns, row, strict=True))) for row in rows]
    path.write_bytes(b"\n".join(lines) + b"\n")


if __name__ == "__main__":
    if sys.argv[1] == "--extend":
        extend(Path(sys.argv[2]), sys.argv[3])
    else:
        record(Path(sys.argv[1]))
