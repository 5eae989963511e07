"""The write guard's scope check on its own, on SQLite and PostgreSQL: events that record
no scope — a node's deletion, a relationship's, feedback on a node or a relationship — are
refused by the scopes of the nodes they touch, inside the append transaction, even where
no tool checked the labels first; nothing is appended."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.server.test_scope_grants import A1, B1, PROVENANCE, scoped_log
from writegate.gate import Gate
from writegate.gate.feedback import EdgeKey
from writegate.gate.server.policy import Policy, Principal
from writegate.gate.server.write_scopes import WriteScopes
from writegate.language import node_identity

APPLE = node_identity("Orchard", {"name": "apple one"})
THORN = node_identity("Bramble", {"name": "blackthorn"})


def guarded(gate: Gate, scopes: frozenset[str]) -> Any:
    policy = Policy.load()
    policy.declare_tools({"delete_node": "write", "graph_improve": "write"})
    principal = Principal("agent-a", scopes=scopes)
    return policy.write_guard(principal, "delete_node", WriteScopes(gate, scopes))


def test_the_guard_refuses_deletions_and_feedback_touching_another_scope(
    any_db: str | Path,
) -> None:
    with Gate.open(scoped_log(any_db)) as gate:
        guard = guarded(gate, frozenset({"a"}))
        head = gate.log.head()
        edge = EdgeKey(sourceId=APPLE, targetId=THORN, relationshipName="LINK")
        attempts = [
            gate.delete_node(
                label="Bramble", merge_keys=B1["merge_keys"], detach=True, guard=guard, **PROVENANCE
            ),
            gate.delete_relationship(
                type="LINK",
                from_label="Orchard",
                from_keys=A1["merge_keys"],
                to_label="Bramble",
                to_keys=B1["merge_keys"],
                guard=guard,
                **PROVENANCE,
            ),
            gate.graph_improve(
                session_id="s", outcome="accepted", used_edge_keys=[edge], guard=guard
            ),
            gate.graph_improve(
                session_id="s", outcome="rejected", used_node_ids=[THORN], guard=guard
            ),
        ]
        for refused in attempts:
            assert refused.status == "rejected", refused
            assert refused.error_code == "POLICY_DENIED"
            assert refused.details["scopes"] == ["b"]
        assert gate.log.head() == head
        mine = gate.graph_improve(
            session_id="s", outcome="accepted", used_node_ids=[APPLE], guard=guard
        )
        assert mine.status != "rejected", mine
        everything = guarded(gate, frozenset({"a", "b"}))
        gone = gate.delete_node(
            label="Bramble",
            merge_keys=B1["merge_keys"],
            detach=True,
            guard=everything,
            **PROVENANCE,
        )
        assert gone.status == "deleted", gone
