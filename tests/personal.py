"""What the tests of personal data write: people who work at Acme (``fixtures/personal_schema.yaml``)."""

from __future__ import annotations

import hashlib
import re
from typing import Any

from writegate.eventlog.canonical import canonical_json
from writegate.gate import Gate

CLAIM: dict[str, Any] = {"source": "test", "extraction_method": "manual"}


def person(gate: Gate, name: str, **properties: Any) -> Any:
    """A Person named ``name`` written with ``properties``: the gate's answer."""
    return gate.write_node(
        label="Person", merge_keys={"name": name}, properties=properties, **CLAIM
    )


def works_at_acme(gate: Gate, *names: str) -> None:
    """The company Acme, and each person ``names`` names WORKS_AT it."""
    gate.write_node(label="Company", merge_keys={"name": "Acme"}, **CLAIM)
    for name in names:
        linked = gate.write_relationship(
            type="WORKS_AT",
            from_label="Person",
            from_keys={"name": name},
            to_label="Company",
            to_keys={"name": "Acme"},
            **CLAIM,
        )
        assert linked.status == "written", linked


_SEAL = re.compile(r'\{"\$sealed":"[^"]*"\}')


def digests(gate: Gate) -> set[str]:
    """The request digests the log's idempotency records hold."""
    with gate.log.snapshot() as conn:
        return {str(row[0]) for row in conn.execute("SELECT request_hash FROM idempotency")}


def guessed(gate: Gate, guesses: list[str]) -> set[str]:
    """The guesses an attacker holding the files confirms: each put where the stored
    requests hold a seal, the request's plain digest looked for among the records."""
    records = digests(gate)
    confirmed = set()
    for event in gate.log.read(after_seq=0, limit=1000, sealed=True).events:
        text = canonical_json(event.request).decode()
        if not _SEAL.search(text):
            continue  # nothing sealed in it to guess
        for guess in guesses:
            filled = _SEAL.sub(canonical_json(guess).decode().replace("\\", "\\\\"), text)
            if hashlib.sha256(filled.encode()).hexdigest() in records:
                confirmed.add(guess)
    return confirmed
