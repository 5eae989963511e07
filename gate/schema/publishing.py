"""Publishing a schema: a document becomes a ``schema.published`` event in the log.

Publishing the version already in force appends nothing (``unchanged``); the check
runs inside the append's transaction, so two servers publishing the same document at
once record it once.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from writegate.eventlog import Actor, EventLog, Transaction
from writegate.gate.errors import ErrorCode
from writegate.gate.models import PublishResult, Rejected
from writegate.gate.schema.document import (
    SchemaDocument,
    SchemaDocumentError,
    load_document,
    parse_document,
)
from writegate.gate.schema.registry import Schema
from writegate.language import SchemaPublished, draft, payload_of

SCHEMA_STREAM = "schema"


def as_document(document: SchemaDocument | Mapping[str, Any] | str | Path) -> SchemaDocument:
    """A document from itself, its JSON-like data, or the path of its YAML/JSON file."""
    if isinstance(document, SchemaDocument):
        return document
    if isinstance(document, str | Path):
        return load_document(document)
    return parse_document(dict(document))


def published(log: EventLog) -> SchemaPublished | None:
    """The newest schema in the log (None if none was ever published)."""
    latest = log.latest(SCHEMA_STREAM)
    payload = payload_of(latest) if latest is not None else None
    return payload if isinstance(payload, SchemaPublished) else None


def published_version(log: EventLog) -> str | None:
    newest = published(log)
    return newest.version if newest is not None else None


def publish_schema(
    log: EventLog,
    document: SchemaDocument | Mapping[str, Any] | str | Path,
    actor: Actor,
) -> PublishResult | Rejected:
    """Append ``document`` to the log unless it is the version already in force."""
    try:
        doc = as_document(document)
    except SchemaDocumentError as exc:
        return Rejected(error_code=ErrorCode.SCHEMA_INVALID, message=str(exc))
    schema = Schema(doc)
    event = SchemaPublished(
        document=doc.model_dump(mode="json", by_alias=True), version=schema.version
    )
    appended: list[int] = []

    def decide(tx: Transaction) -> None:
        if published_version(log) != schema.version:
            appended.append(tx.emit(draft(event, [SCHEMA_STREAM])).seq)

    log.append(actor, decide)
    return PublishResult(
        status="published" if appended else "unchanged",
        schema_version=schema.version,
        labels=len(doc.nodes),
        relationship_types=len(doc.relationships),
        seq=appended[0] if appended else None,
    )
