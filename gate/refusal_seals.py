"""Refusals of requests naming personal values, kept sealed as the writes they refuse are.

The rejections table keeps each refused request for auditors (``gate.rejections``). Kept
in the clear, a personal node's keys and values there could outlive the person: a retry
refused after the forgetting held them again, with no subject left for ``forget`` to find.
So a refusal of a request naming anything personal is sealed in its own transaction as its
write would have been (``gate.personal``: each node's values with its subject, made if the
log has none — as the write would have made it), its details alike (a possible duplicate's
candidates: with theirs), and its message, which may quote a value (a type mismatch does)
or name a candidate, sealed whole with the first subject it names. Reads open them; a
forgetting finds the rows by the seals they hold (``seals_of_subjects``) and deletes them,
and the subjects only they held, in the log and in a copy it reaches (``eventlog.erasing``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import orjson

from writegate.eventlog.canonical import canonical_json
from writegate.eventlog.sealing import MARK, Sealer, Seals, open_rows
from writegate.eventlog.sql import Sql
from writegate.gate.personal import personal_of, sealed_observations
from writegate.gate.schema import LoadedSchema

Seal = Callable[[Any, Sealer], Any]  # a request with its personal values sealed by a sealer
SEALED = ("message", "request", "details")  # the columns a sealed refusal seals
FORGOTTEN_MESSAGE = "(forgotten)"  # a sealed message read once its subject is forgotten


def sealing(snapshot: Callable[[], LoadedSchema], request: Any, operation: str = "") -> Seal | None:
    """How a refusal of ``request`` seals what it names personal (None: it names nothing
    personal, or there is no schema to say what is). A refused observation's personal text
    has no subject to be sealed with and forgotten by: it is not kept (``_textless``)."""
    try:
        schema = snapshot()
        personal = personal_of(schema.registry)
    except Exception:  # no schema, or none readable: the refusal is kept as it was sent
        return None
    if operation == "record_observation" and sealed_observations(schema):
        return _textless
    return personal.sealed if personal is not None and personal.mentions(request) else None


def _textless(request: Any, _sealer: Sealer) -> Any:
    if isinstance(request, dict) and isinstance(text := request.get("text"), str):
        return {**request, "text": f"(personal text of {len(text)} characters)"}
    return request


def sealed(conn: Sql, seal: Seal, columns: dict[str, str | None]) -> dict[str, str | None]:
    """A refusal's ``SEALED`` columns (the request as canonical JSON) with its personal
    values sealed on ``conn``, in the refusal's transaction; as they are if none is."""
    seals = Seals(conn)
    request = canonical_json(seal(orjson.loads(str(columns["request"])), seals)).decode()
    details = columns["details"]
    if details:
        details = canonical_json(seal(orjson.loads(details), seals)).decode()
    if not seals.keys:  # nothing sealed: as the seal left it (an observation's text gone)
        return {**columns, "request": request, "details": details}
    locator = next(iter(seals.keys))  # the first node it names (a write's own)
    message = canonical_json(seals.seal(locator, columns["message"])).decode()
    return {"request": request, "message": message, "details": details}


def opened(conn: Sql, row: dict[str, Any]) -> dict[str, Any]:
    """A stored refusal with its sealed values put back (``null`` where forgotten)."""
    texts = [row[column] or "" for column in SEALED]
    if not any(MARK in text for text in texts):
        return row
    message, request, details = open_rows(conn, [texts], (0, 1, 2))[0]
    if texts[0].startswith(MARK):  # sealed whole: the message as JSON (null: forgotten)
        said = orjson.loads(message)
        message = said if isinstance(said, str) else FORGOTTEN_MESSAGE
    return {**row, "message": message, "request": request, "details": details or None}


def seals_of_subjects(subjects: Iterable[str]) -> list[str]:
    """The text each of the ``subjects``' sealed values starts with: what finds the
    refusals holding any of them (``rejections.forget_rejections``)."""
    return [f"{MARK}{subject}." for subject in subjects]


def seals_of_values(values: Iterable[tuple[str, str]]) -> list[str]:
    """The sealed text of each (subject, digest) of ``values``: what finds the refusals
    holding one (a value sealed again is sealed alike: one key, one digest)."""
    return [f'{MARK}{subject}.{digest}"' for subject, digest in values]


__all__ = ["Seal", "opened", "sealed", "sealing", "seals_of_subjects", "seals_of_values"]
