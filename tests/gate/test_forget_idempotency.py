"""Idempotency records of personal writes, on SQLite and PostgreSQL: a record binds its key
to a digest of the request as sealed with its subjects' keys, so once a subject is forgotten
nobody holding the files can guess its values back from the record (as they could from a
plain digest of the request), and a retry after the forgetting is refused instead of
writing the forgotten values again."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import AGENT, FIXTURES, concurrently
from tests.personal import CLAIM, digests, guessed
from writegate.eventlog.canonical import canonical_json
from writegate.gate import Gate
from writegate.gate.forgetting import ForgetResult
from writegate.gate.models import Rejected

SCHEMA = yaml.safe_load((FIXTURES / "personal_schema.yaml").read_text())


@pytest.fixture
def people(any_db: str | Path) -> Iterator[Gate]:
    document = {**SCHEMA, "personal_observations": True}
    with Gate.open(any_db, default_actor=AGENT) as gate:
        assert gate.publish_schema(document).status == "published"
        yield gate


def _ada(gate: Gate, name: str) -> Any:
    return gate.write_node(label="Person", merge_keys={"name": name}, properties={"role": "pilot"},
                           idempotency_key="ada-1", **CLAIM)  # fmt: skip


def test_a_forgotten_persons_name_cannot_be_guessed_from_the_idempotency_record(
    people: Gate,
) -> None:
    marker = f"MARK{os.urandom(6).hex()}"
    assert _ada(people, marker).status == "written"
    forgotten = people.forget("Person", {"name": marker}, reason="asked")
    assert isinstance(forgotten, ForgetResult), forgotten
    assert digests(people)  # the record stays: the key is still spent
    assert guessed(people, ["Ada", "Grace", marker]) == set()


def test_a_forgotten_observations_text_cannot_be_guessed_from_the_idempotency_record(
    people: Gate,
) -> None:
    marker = f"MARK{os.urandom(6).hex()}"
    heard = people.record_observation(text=marker, idempotency_key="obs-1", **CLAIM)
    assert heard.status == "recorded", heard
    again = people.record_observation(text=marker, idempotency_key="obs-1", **CLAIM)
    assert again.model_dump() == heard.model_dump()  # a retry answers the first append
    written = people.write_node(label="Person", merge_keys={"name": "Ada"},
                                observations=[heard.observation_id], **CLAIM)  # fmt: skip
    assert written.status == "written", written
    forgotten = people.forget("Person", {"name": "Ada"}, reason="asked")
    assert isinstance(forgotten, ForgetResult)
    assert forgotten.counts["state_observations"] == 1
    assert guessed(people, ["hello", marker]) == set()


def test_a_retry_answers_the_first_write_until_the_person_is_forgotten_then_is_refused(
    people: Gate,
) -> None:
    marker = f"MARK{os.urandom(6).hex()}"
    first = _ada(people, marker)
    assert first.status == "written"
    assert _ada(people, marker).model_dump() == first.model_dump()
    other = _ada(people, f"{marker}-other")
    assert isinstance(other, Rejected)
    assert other.error_code == "IDEMPOTENCY_KEY_REUSED"
    assert isinstance(people.forget("Person", {"name": marker}, reason="asked"), ForgetResult)
    head = people.log.head()
    retried = _ada(people, marker)
    assert isinstance(retried, Rejected)
    assert retried.error_code == "IDEMPOTENCY_KEY_REUSED"
    assert people.log.head() == head  # the forgotten person is not written again


def test_a_write_naming_nothing_personal_keeps_the_plain_digest_of_its_request(
    people: Gate,
) -> None:
    written = people.write_node(label="Company", merge_keys={"name": "Acme"},
                                idempotency_key="acme-1", **CLAIM)  # fmt: skip
    assert written.status == "written"
    request = people.log.read(after_seq=0, limit=100).events[-1].request
    assert digests(people) == {hashlib.sha256(canonical_json(request)).hexdigest()}


def test_concurrent_retries_of_a_new_person_append_once_and_answer_alike(people: Gate) -> None:
    results: list[object] = []

    def retry() -> None:
        results.append(_ada(people, "Ada Racer").model_dump())

    concurrently(retry, 8)
    assert all(r == results[0] for r in results), results
    assert len(people.log.read(types=["node.written"], limit=100).events) == 1
