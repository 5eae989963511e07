"""Every audit command's JSON, checked exactly against the history that was written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import SEED_SCHEMA
from tests.console import run as writegate_run
from writegate.eventlog import EventLog
from writegate.gate.schema import load_document

SCHEMA_VERSION = load_document(SEED_SCHEMA).version()
TEAM, CHAT = "https://example.org/team", "chat-2032-01-01"
FORMULA = "default"


def run(db: Path, *args: str) -> Any:
    return json.loads(run_text(db, *args))


def run_text(db: Path, *args: str) -> str:
    done = writegate_run(["--db", str(db), *args])
    assert done.returncode == 0, done.stderr
    return done.stdout


def at(minute: int) -> str:
    return f"2032-01-01T09:{minute:02d}:00.000000Z"


def entry(
    seq: int,
    minute: int,
    type_: str,
    version: int,
    agent: str,
    source: str,
    method: str,
    reliability: float,
    confidence: float,
    changes: dict[str, Any],
    remapped: str | None = None,
) -> dict[str, Any]:
    session = {"ada-bot": "s-ada", "bob-bot": "s-bob"}[agent]
    transport = {"ada-bot": "mcp", "bob-bot": "http"}[agent]
    return {
        "seq": seq,
        "occurred_at": at(minute),
        "type": type_,
        "version": version,
        "agent": agent,
        "session": session,
        "transport": transport,
        "source": source,
        "extraction_method": method,
        "reliability": reliability,
        "confidence": confidence,
        "formula": FORMULA,
        "write_gate_version": "0.1.0",
        "schema_version": SCHEMA_VERSION,
        "remapped_from": remapped,
        "changes": {k: {"before": b, "after": a} for k, (b, a) in changes.items()},
    }


def test_audit_node(audited: Path) -> None:
    trail = run(audited, "audit", "node", "Person", "name=Alice", "--format", "json")
    related = [
        (r["seq"], r["type"], r["relationship_type"], r["direction"], r["other"], r["agent"])
        for r in trail.pop("relationships")
    ]
    assert related == [  # its relationships' events too: both directions, deletions included
        (
            5,
            "relationship.written",
            "WORKS_FOR",
            "out",
            'Organization{"name":"Initech"}',
            "ada-bot",
        ),
        (11, "relationship.written", "KNOWS", "in", 'Person{"name":"Dan"}', "ada-bot"),
        (13, "relationship.deleted", "KNOWS", "in", 'Person{"name":"Dan"}', "ada-bot"),
    ]
    assert trail == {
        "kind": "node",
        "identity": 'Person{"name":"Alice"}',
        "exists": True,
        "entries": [
            entry(
                2,
                0,
                "node.written",
                1,
                "ada-bot",
                TEAM,
                "parsed",
                0.9,
                0.9 * 0.85,
                {"age": (None, 30), "name": (None, "Alice"), "skills": (None, ["go", "sql"])},
            ),
            entry(
                7,
                5,
                "node.written",
                2,
                "ada-bot",
                "hr.csv",
                "api",
                1.0,
                1.0,
                {"age": (30, 31), "skills": (["go", "sql"], None)},
            ),
        ],
        "supported_by": [  # the current version: its writer alone (nothing corroborated it)
            {
                "seq": 7,
                "occurred_at": at(5),
                "kind": "written",
                "agent": "ada-bot",
                "source": "hr.csv",
                "extraction_method": "api",
                "confidence": 1.0,
                "corroborated_confidence": 1.0,
            }
        ],
    }


def test_audit_node_through_a_synonym_and_its_stub_life(audited: Path) -> None:
    carol = run(audited, "audit", "node", "person", "name=Carol", "--format", "json")
    assert [(e["seq"], e["type"], e["agent"]) for e in carol["entries"]] == [
        (6, "relationship.written", "bob-bot"),  # created as a stub endpoint
        (9, "node.written", "ada-bot"),
    ]
    assert carol["entries"][0]["changes"] == {
        "_stub": {"before": None, "after": True},
        "name": {"before": None, "after": "Carol"},
    }
    assert carol["entries"][1]["changes"] == {
        "_stub": {"before": True, "after": None},
        "age": {"before": None, "after": 25},
    }


def test_audit_deleted_node_and_relationship(audited: Path) -> None:
    dan = run(audited, "audit", "node", "Person", "name=Dan", "--format", "json")
    assert dan["exists"] is False
    assert [(e["seq"], e["type"], e["version"]) for e in dan["entries"]] == [
        (10, "node.written", 1),
        (14, "node.deleted", 2),
    ]
    assert dan["entries"][1]["changes"] == {"name": {"before": "Dan", "after": None}}
    knows = run(
        audited,
        "audit",
        "relationship",
        "KNOWS",
        "--from",
        "Person",
        "-f",
        "name=Bob",
        "--to",
        "Person",
        "-t",
        "name=Carol",
        "--format",
        "json",
    )
    assert knows["exists"] is False
    assert [(e["seq"], e["agent"], e["source"], e["confidence"]) for e in knows["entries"]] == [
        (6, "bob-bot", CHAT, 0.6 * 0.6),
        (12, "bob-bot", "cleanup", 0.75),
    ]


def test_audit_agent(audited: Path) -> None:
    assert run(audited, "audit", "agent", "bob-bot", "--format", "json") == {
        "facet": "agent",
        "value": "bob-bot",
        "events": 4,
        "written": 3,
        "deleted": 1,
        "by_label": {"Entity": 1, "KNOWS": 2, "Person": 1},
        "first_seq": 3,
        "last_seq": 12,
        "first_at": at(1),
        "last_at": at(9),
        "confidence": {
            "buckets": [0, 0, 0, 3, 0, 0, 0, 0, 0, 0],
            "count": 3,
            "minimum": 0.6 * 0.6,
            "maximum": 0.6 * 0.6,
            "mean": round(0.6 * 0.6, 6),
        },
    }


def test_audit_source_and_method_with_time_bounds(audited: Path) -> None:
    cleanup = run(audited, "audit", "source", "cleanup", "--format", "json")
    assert (cleanup["events"], cleanup["written"], cleanup["deleted"]) == (3, 0, 3)
    assert cleanup["by_label"] == {"KNOWS": 2, "Person": 1}
    assert cleanup["confidence"]["count"] == 0
    parsed = run(
        audited,
        "audit",
        "method",
        "parsed",
        "--format",
        "json",
        "--since",
        "2032-01-01T09:02:00Z",
        "--until",
        "2032-01-01T09:07:30Z",
    )
    assert (parsed["first_seq"], parsed["last_seq"], parsed["events"]) == (4, 9, 3)
    assert parsed["by_label"] == {"Organization": 1, "Person": 1, "WORKS_FOR": 1}


def test_show_node_as_of(audited: Path) -> None:
    stub = run(
        audited,
        "show",
        "node",
        "Person",
        "name=Carol",
        "--as-of",
        "2032-01-01T09:05:00Z",
        "--format",
        "json",
    )
    assert stub == {
        "identity": 'Person{"name":"Carol"}',
        "as_of": at(5),
        "state": "present",
        "version": 1,
        "properties": {"name": "Carol"},
        "stub": True,
        "last_seq": 6,
        "last_agent": "bob-bot",
        "last_source": CHAT,
        "confidence": 0.6 * 0.6,
        "relationships": [  # as they were then: Bob's KNOWS, deleted since
            {
                "identity": '(Person{"name":"Bob"})-[KNOWS]->(Person{"name":"Carol"})',
                "type": "KNOWS",
                "from": 'Person{"name":"Bob"}',
                "to": 'Person{"name":"Carol"}',
                "state": "present",
                "properties": {},
                "valid_from": at(4),
                "valid_to": None,
                "superseded_by": None,
                "version": 1,
                "last_seq": 6,
                "last_agent": "bob-bot",
                "last_source": CHAT,
                "confidence": 0.6 * 0.6,
            }
        ],
    }
    before = run(
        audited,
        "show",
        "node",
        "Person",
        "name=Dan",
        "--as-of",
        "2032-01-01T09:07:59Z",
        "--format",
        "json",
    )
    assert before["state"] == "absent"
    gone = run(
        audited,
        "show",
        "node",
        "Person",
        "name=Dan",
        "--as-of",
        "2032-01-01T09:30:00Z",
        "--format",
        "json",
    )
    assert (gone["state"], gone["version"], gone["last_seq"]) == ("deleted", 2, 14)


def test_report_json(audited: Path) -> None:
    report = run(audited, "report", "--json")
    head_hash = report.pop("head_hash")
    assert len(head_hash) == 64
    assert report.pop("chain_detail").startswith("chain ok: 14 events")
    assert report.pop("activity") == {  # the hour of the whole log
        "unit": "hour",
        "buckets": [
            {
                "start": "2032-01-01T09",
                "writes": {"ada-bot": 9, "bob-bot": 4},
                "rejections": {"ada-bot": 1, "bob-bot": 2},
            }
        ],
    }
    assert report == {
        "first_at": "2032-01-01T08:59:00.000000Z",
        "events": 14,
        "head_seq": 14,
        "chain_ok": True,
        "last_at": at(10),
        "writes_by_agent": {"ada-bot": 9, "bob-bot": 4},
        "rejections_by_agent": {"bob-bot": 2, "ada-bot": 1},
        "rejections_by_code": {
            "ENDPOINT_NOT_FOUND": 1,
            "SCHEMA_PROTECTED_FIELD": 1,
            "SCHEMA_UNKNOWN_LABEL": 1,
        },
        "writes_by_method": {"parsed": 6, "llm": 3, "manual": 3, "api": 1},
        "writes_by_label": {
            "Person": 6,
            "KNOWS": 4,
            "Organization": 1,
            "WORKS_FOR": 1,
            "Entity": 1,
        },
        "confidence": {
            "buckets": [0, 0, 0, 3, 0, 0, 0, 6, 0, 1],
            "count": 10,
            "minimum": 0.6 * 0.6,
            "maximum": 1.0,
            "mean": round((3 * (0.6 * 0.6) + 6 * (0.9 * 0.85) + 1.0) / 10, 6),
        },
        "remaps": {":Gizmo -> Entity": 1, ":person -> Person": 1},
        "unresolved_stubs": 0,
        "superseded": 2,  # Alice's age (30 -> 31) and her skills (removed by a null)
        "pending_reviews": 0,
        "review_queue": [],
        "projections": [],
    }


GOLDEN = Path(__file__).with_name("report.golden.md")


def test_report_markdown_matches_the_golden_file(audited: Path) -> None:
    """The head hash depends on random event ids, so it is the one thing replaced."""
    with EventLog(audited, create=False) as log:
        head_hash = log.head()[1]
    text = run_text(audited, "report", "--markdown").replace(head_hash, "<head-hash>")
    assert text == GOLDEN.read_text()
