"""Observations kept in a scope, on SQLite and on PostgreSQL: the event, the read model and
the text index keep it; a reader granted other scopes never finds, opens or is lent one,
and a node it was cited by outside the grant is neither a fact nor a seed."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from freezegun import freeze_time

from tests.gate.scoped import WRITE, only
from writegate.gate import Gate, GateRejection, ObservationResult, Rejected
from writegate.language import node_identity, observation_id


@pytest.fixture
def db_path(any_db: str | Path) -> str | Path:
    return any_db


def keep(gate: Gate, text: str, scope: str | None, minute: int = 0, **more: Any) -> str:
    with freeze_time(datetime(2030, 5, 1, 12, minute, tzinfo=UTC)):  # after the schema
        kept = gate.record_observation(
            text=text, source="chat", extraction_method="parsed", scope=scope,
            said_at=datetime(2024, 5, 1, 12, minute, tzinfo=UTC), **more,
        )  # fmt: skip
    assert isinstance(kept, ObservationResult), kept
    return kept.observation_id


def test_an_observation_is_kept_in_the_scope_named(scoped_gate: Gate) -> None:
    kept = keep(scoped_gate, "the harbour froze over", "b")
    plain = keep(scoped_gate, "the harbour froze over", None)
    assert kept != plain  # the same words in two scopes: two observations
    assert plain == observation_id("the harbour froze over", "chat", "2024-05-01T12:00:00.000000Z")
    assert keep(scoped_gate, "the harbour froze over", "default") == plain
    events = {e.payload["observation"]: e.payload for e in scoped_gate.log.iter_events()
              if e.type == "observation.recorded"}  # fmt: skip
    assert events[kept]["scope"] == "b"
    assert "scope" not in events[plain]
    conn = scoped_gate.log.connection()
    documents = {d.identity: d for d in scoped_gate.state.text_index(conn).documents(conn)}
    assert (documents[kept].scope_from, documents[kept].scope_to) == ("b", "b")
    assert (documents[plain].scope_from, documents[plain].scope_to) == ("default", "default")
    assert scoped_gate.state.equals_replay(scoped_gate.log, conn)


def test_a_scope_the_schema_does_not_name_is_refused_naming_those_it_does(
    scoped_gate: Gate,
) -> None:
    refused = scoped_gate.record_observation(
        text="somewhere else", source="chat", extraction_method="parsed", scope="elsewhere"
    )
    assert isinstance(refused, Rejected)
    assert refused.error_code == "INVALID_ARGUMENT"
    assert "a, b, c, default" in refused.message
    assert [e.type for e in scoped_gate.log.iter_events()] == ["schema.published"]


def test_a_writer_granted_other_scopes_is_told_where_it_would_write(scoped_gate: Gate) -> None:
    events = []

    def guard(actor: Any, appended: Any) -> None:
        events.extend(appended)

    keep(scoped_gate, "the harbour froze over", "b", guard=guard)
    assert only("a").refused(events) == ["b"]
    assert only("b").refused(events) == []


def test_a_reader_finds_and_opens_only_the_observations_of_its_grant(scoped_gate: Gate) -> None:
    seen = keep(scoped_gate, "the harbour froze over in march", "a")
    hidden = keep(scoped_gate, "the harbour froze over in april", "b", minute=1)
    reader = scoped_gate.observation_reader(scopes=only("a"))
    found = reader.search_observations("harbour froze")
    assert [o.observation_id for o in found.observations] == [seen]
    assert reader.open_observation(seen).text.endswith("march")
    with pytest.raises(GateRejection) as missing:
        reader.open_observation(hidden)
    assert missing.value.code.value == "OBSERVATION_NOT_FOUND"
    nothing = scoped_gate.observation_reader(scopes=only())
    assert nothing.search_observations("harbour").observations == []
    everyone = scoped_gate.observation_reader()
    assert len(everyone.search_observations("harbour").observations) == 2


def test_the_facts_an_observation_backs_are_named_only_inside_the_grant(
    scoped_gate: Gate,
) -> None:
    heard = keep(scoped_gate, "Ann and Bea met at the harbour", "a")
    for label, name in (("Alpha", "ann"), ("Beta", "bea")):
        written = scoped_gate.write_node(
            label=label, merge_keys={"name": name}, properties={}, observations=[heard], **WRITE
        )
        assert written.status == "written", written
    facts = scoped_gate.observation_reader(scopes=only("a")).open_observation(heard).facts
    assert facts == [node_identity("Alpha", {"name": "ann"})]
    assert len(scoped_gate.observation_reader().open_observation(heard).facts) == 2


def test_graph_query_lends_only_to_visible_neighbours_and_seeds_only_visible_nodes(
    scoped_gate: Gate,
) -> None:
    turns = [
        ("a", "Ann: I went to the animal shelter on Saturday."),
        ("b", "Bea: We came home with a puppy called Rex!"),
        ("a", "Ann: The weather was fine."),
    ]
    ids = [keep(scoped_gate, text, scope, minute, session="s-1")
           for minute, (scope, text) in enumerate(turns)]  # fmt: skip
    written = scoped_gate.write_node(
        label="Beta", merge_keys={"name": "bea"}, properties={}, observations=[ids[0]], **WRITE
    )
    assert written.status == "written", written
    everyone = scoped_gate.reader().graph_query("the animal shelter")
    assert ids[1] in [o.observation_id for o in everyone.observations]
    assert [s.entity for s in everyone.seeds] == [node_identity("Beta", {"name": "bea"})]
    answer = scoped_gate.reader(scopes=only("a")).graph_query("the animal shelter")
    assert [o.observation_id for o in answer.observations] == [ids[0], ids[2]]
    assert answer.seeds == []
    # the head hash the answer carries is hex, and may spell "bea" by chance: no name in it
    text = orjson.dumps(answer.model_dump(mode="json", by_alias=True, exclude={"answered_at"}))
    assert b"puppy" not in text
    assert b"bea" not in text


def test_the_context_of_many_hits_is_read_as_each_alone(scoped_gate: Gate) -> None:
    ids = [keep(scoped_gate, f"turn {n} of the talk", "a", n, session="s-1") for n in range(6)]
    with scoped_gate.log.snapshot() as conn:
        rows = scoped_gate.state.observations(conn, ids)
        together = scoped_gate.state.beside(conn, rows, 2)
        for row in rows:
            alone = scoped_gate.state.beside(conn, [row], 2)
            assert together[row.id] == alone[row.id]
        assert [(d, r.id) for d, r in together[ids[2]]] == [
            (1, ids[1]),
            (2, ids[0]),
            (1, ids[3]),
            (2, ids[4]),
        ]
        assert scoped_gate.state.beside(conn, rows, 2, frozenset({"b"})) == {
            row.id: [] for row in rows
        }


def test_a_visible_fact_never_names_the_hidden_observation_it_cites(scoped_gate: Gate) -> None:
    """A writer granted a and b may cite b's words in a fact of a; a reader of a sees the
    fact and the observations it may see, never the id of one it may not (an id is the
    hash of the words: a guess could be confirmed against it)."""
    seen = keep(scoped_gate, "Ann said she likes the harbour", "a")
    hidden = keep(scoped_gate, "Bea said Ann likes the harbour", "b", minute=1)
    for name in ("ann", "cy"):
        written = scoped_gate.write_node(
            label="Alpha", merge_keys={"name": name}, properties={"likes": "harbour"},
            observations=[seen, hidden], **WRITE,
        )  # fmt: skip
        assert written.status == "written", written
    linked = scoped_gate.write_relationship(
        type="LINK", from_label="Alpha", from_keys={"name": "ann"}, to_label="Alpha",
        to_keys={"name": "cy"}, observations=[seen, hidden], **WRITE,
    )  # fmt: skip
    assert linked.status == "written", linked
    reader = scoped_gate.reader(scopes=only("a"))
    ann = {"label": "Alpha", "merge_keys": {"name": "ann"}}
    answers = [
        reader.search_nodes("ann"),
        reader.open_nodes([ann]),
        reader.neighbors(ann),
        reader.find_path(ann, {"label": "Alpha", "merge_keys": {"name": "cy"}}),
        reader.node_history(ann),
        reader.graph_query("ann harbour"),
    ]
    for answer in answers:
        said = orjson.dumps(answer.model_dump(mode="json", by_alias=True)).decode()
        assert seen in said, type(answer).__name__
        assert hidden not in said, type(answer).__name__
    everyone = scoped_gate.reader().open_nodes([ann])
    assert everyone.nodes[0].provenance.observations == [seen, hidden]
