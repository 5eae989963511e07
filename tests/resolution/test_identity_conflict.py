"""A write that meets a held node by its merge keys while an identity property or a vetoing
evidence field disagrees names another thing of the same name: it is refused with
``IDENTITY_CONFLICT`` (or held where the label has a review lane), never superseded
silently, and lands only when the writer says ``resolution: same``; entity resolution's
``auto`` never lands on a candidate whose identity disagrees either."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli.conftest import writegate
from tests.readme import commands, section
from tests.server.harness import WRITEGATE
from writegate.eventlog import Actor
from writegate.gate import Gate, Rejected, WriteNodeResult
from writegate.gate.models import ProposedResult
from writegate.language import NodeRef
from writegate.projections.state import NodeRow, StateProjection

PERSON: dict[str, Any] = {
    "merge_keys": ["name"],
    "resolution": {
        "policy": "propose",
        "identity": ["ssn"],
        "evidence": {
            "dob": {"compare": "date"},
            "street": {"compare": "similar", "veto": False},
        },
    },
}
SCHEMA: dict[str, Any] = {
    "nodes": {
        "Person": PERSON,
        "Patient": {**PERSON, "review_below": 0.1},
        "Shop": {
            "merge_keys": ["key"],
            "resolution": {
                "policy": "auto",
                "kind": "organisation",
                "name": "name",
                "identity": ["phone"],
            },
        },
    }
}


@pytest.fixture
def gate(any_db: str | Path) -> Iterator[Gate]:
    with Gate.open(any_db, default_actor=Actor(agent="a")) as g:
        assert g.publish_schema(SCHEMA).status == "published"
        yield g


def person(gate: Gate, label: str = "Person", **properties: Any) -> object:
    same = properties.pop("same", False)
    return gate.write_node(
        label=label,
        merge_keys={"name": "john smith"},
        properties=properties,
        source="s",
        extraction_method="api",
        resolution="same" if same else None,
    )


def held(gate: Gate, label: str = "Person") -> NodeRow:
    ref = NodeRef.of(label, {"name": "john smith"}, None)
    row = StateProjection().node(gate.log.connection(), ref.identity)
    assert row is not None
    return row


def test_another_identity_under_the_same_name_is_refused_naming_both_values(gate: Gate) -> None:
    assert isinstance(person(gate, ssn="111"), WriteNodeResult)
    out = person(gate, ssn="222", dob="1988-07-30")
    assert isinstance(out, Rejected), out
    assert out.error_code == "IDENTITY_CONFLICT"
    assert out.details["merge_keys"] == {"name": "john smith"}
    assert out.details["disputes"] == [
        {"field": "ssn", "kind": "identity", "held": "111", "written": "222"}
    ]
    node = held(gate)
    assert node.properties["ssn"] == "111"
    assert node.version == 1


def test_the_writer_who_knows_it_is_the_same_lands_it_with_resolution_same(gate: Gate) -> None:
    person(gate, ssn="111")
    out = person(gate, ssn="222", same=True)
    assert isinstance(out, WriteNodeResult), out
    assert out.version == 2
    assert held(gate).properties["ssn"] == "222"


def test_a_vetoing_field_disputes_a_landing_and_a_near_miss_or_a_move_does_not(
    gate: Gate,
) -> None:
    person(gate, ssn="111", dob="1988-07-30", street="1 High Street")
    refused = person(gate, dob="1971-02-11")
    assert isinstance(refused, Rejected)
    assert refused.error_code == "IDENTITY_CONFLICT"
    assert [d["field"] for d in refused.details["disputes"]] == ["dob"]
    # a digit apart: a typo or a namesake born a day later, the writer says which
    typo = person(gate, dob="1988-07-31")
    assert isinstance(typo, Rejected)
    assert typo.error_code == "IDENTITY_CONFLICT"
    assert isinstance(person(gate, dob="1988-07-31", same=True), WriteNodeResult)
    # a new street (veto: false), a value missing: one person
    assert isinstance(person(gate, street="9 Low Road"), WriteNodeResult)
    assert isinstance(person(gate, ssn="111", nickname="jack"), WriteNodeResult)


def test_a_label_with_a_review_lane_holds_the_disputed_write_for_a_reviewer(gate: Gate) -> None:
    person(gate, "Patient", ssn="111")
    out = person(gate, "Patient", ssn="222")
    assert isinstance(out, ProposedResult), out
    assert "another ssn (ssn '111' held, '222' written)" in out.reason, out
    assert held(gate, "Patient").properties["ssn"] == "111"
    decided = gate.reviews.decide(out.proposal, "approve", Actor(agent="reviewer"))
    assert decided.status != "rejected", decided
    assert held(gate, "Patient").properties["ssn"] == "222"  # approved: it is this one


def test_auto_never_lands_on_a_candidate_whose_identity_disagrees(gate: Gate) -> None:
    def shop(key: str, phone: str) -> object:
        return gate.write_node(
            label="Shop",
            merge_keys={"key": key},
            properties={"name": "Acme Hardware Limited", "phone": phone},
            source="s",
            extraction_method="api",
        )

    assert isinstance(shop("a", "0201"), WriteNodeResult)
    out = shop("b", "0999")
    assert isinstance(out, Rejected), out
    assert out.error_code == "POSSIBLE_DUPLICATE"
    (candidate,) = out.details["candidates"]
    assert candidate["verdict"] == "possible"
    assert "never lands: phone '0201' held, '0999' written" in candidate["reasons"]
    other = gate.write_node(  # the same number, another name: a switchboard, asked about
        label="Shop", merge_keys={"key": "d"}, properties={"name": "Blue Bar", "phone": "0201"},
        source="s", extraction_method="api",
    )  # fmt: skip
    assert isinstance(other, Rejected)
    [asked] = other.details["candidates"]
    assert asked["verdict"] == "possible"
    assert "the same phone beside a name that differs" in asked["reasons"][0]
    landed = shop("c", "0201")  # the same number and name: the same shop
    assert isinstance(landed, WriteNodeResult)
    assert landed.merge_keys == {"key": "a"}


def test_the_cli_refuses_the_documented_example_and_lands_it_with_resolution_same(
    tmp_path: Path,
) -> None:
    schema = tmp_path / "schema.yaml"
    schema.write_text(yaml.safe_dump({"nodes": {"Person": PERSON}}))
    db = tmp_path / "log.db"
    writegate(db, "init", "--schema", str(schema))
    prov = ("--source", "s", "--method", "api")
    writegate(db, "write", "node", "Person:name=john smith", "-p", 'ssn="111"', *prov)
    second = ("write", "node", "Person:name=john smith", "-p", 'ssn="222"', "-p", "dob=1988-07-30")
    refused = writegate(db, *second, *prov, "--format", "json", code=1)
    assert json.loads(refused.stdout)["error_code"] == "IDENTITY_CONFLICT"
    writegate(db, *second, *prov, "--resolution", "same")
    shown = writegate(db, "show", "node", "Person:name=john smith", "--format", "json")
    assert json.loads(shown.stdout)["properties"]["ssn"] == "222"


def test_the_guides_identity_commands_work_as_pasted(tmp_path: Path) -> None:
    first, second, third = commands(section("#### What identifies: codes and identity fields"))
    schema = tmp_path / "schema.yaml"
    schema.write_text(yaml.safe_dump({"nodes": {"Person": PERSON}}))
    writegate(tmp_path / "people.db", "init", "--schema", str(schema))

    def pasted(words: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [WRITEGATE, *words[1:]], cwd=tmp_path, capture_output=True, text=True, check=False
        )

    assert pasted(first).returncode == 0
    refused = pasted(second)
    assert refused.returncode == 1
    assert refused.stderr.startswith("error: IDENTITY_CONFLICT: Person{")
    landed = pasted(third)
    assert landed.returncode == 0, landed.stderr
    assert "version 2" in landed.stdout or "seq 3" in landed.stdout, landed.stdout


def test_a_conflict_names_the_nodes_the_write_may_mean(gate: Gate) -> None:
    """Refused because the node its keys name is another person, a write is told which
    held nodes it may mean instead (a public set's typist wrote a surname alone, which
    another person's node held): the candidates its name and values would be proposed."""

    def named(name: str, ssn: str, dob: str) -> object:
        return gate.write_node(
            label="Person",
            merge_keys={"name": name},
            properties={"ssn": ssn, "dob": dob},
            source="s",
            extraction_method="api",
            resolution="new",
        )

    assert isinstance(named("isabella nguyen", "8693348", "1976-05-17"), WriteNodeResult)
    assert isinstance(named("nguyen", "9550440", "1959-10-19"), WriteNodeResult)
    out = gate.write_node(
        label="Person",
        merge_keys={"name": "nguyen"},
        properties={"ssn": "8693348", "dob": "1976-05-17"},
        source="s",
        extraction_method="api",
    )
    assert isinstance(out, Rejected)
    assert out.error_code == "IDENTITY_CONFLICT"
    assert out.details["merge_keys"] == {"name": "nguyen"}
    candidates = out.details["candidates"]
    assert [c["merge_keys"] for c in candidates] == [{"name": "isabella nguyen"}]
    assert any("ssn" in reason for reason in candidates[0]["reasons"])
    assert "isabella nguyen" in out.message
