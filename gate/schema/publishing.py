"""Publishing a schema: a document becomes a ``schema.published`` event in the log, guarded.

Inside the append's write transaction — so no write slips in between — the document is
compared with the one in force and its impact on live data is read (``gate.schema.diff``).
A change that strands live nodes or invalidates them is refused with
``SCHEMA_CHANGE_UNSAFE`` (the diff in ``details``) unless ``force``; the event records the
diff either way, ``forced`` when it was unsafe. Publishing the version already in force
appends nothing (``unchanged``), so two servers publishing one document record it once. A
publish that switches a label's entity resolution on, or changes what its keys are made of,
indexes the label's live nodes in the same transaction (``gate.schema.indexing``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import Field

from writegate.eventlog import Actor, Log, Transaction
from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.models import PublishResult, Rejected
from writegate.gate.results import rejected
from writegate.gate.schema.diff import SchemaDiff, schema_diff
from writegate.gate.schema.document import SchemaDocument, SchemaDocumentError, parse_document
from writegate.gate.schema.indexing import index_labels, reword_labels
from writegate.gate.schema.loading import load_document
from writegate.gate.schema.sources import SCHEMA_STREAM, published
from writegate.language import SchemaPublished, draft, payload_of
from writegate.projections.state import StateReader


class SchemaPublishResult(PublishResult):
    """What publishing did, with the change it made and its impact (None if unchanged)."""

    diff: SchemaDiff | None = None
    # live nodes indexed for entity resolution its labels now ask for (``gate.schema.indexing``)
    indexed: int = 0
    # labels whose live nodes' text it made again, its searchable properties changed
    reworded: list[str] = Field(default_factory=list)


def as_document(document: SchemaDocument | Mapping[str, Any] | str | Path) -> SchemaDocument:
    """A document from its YAML/JSON file, its JSON-like data, or itself — each held to
    the publishing rules (a document built elsewhere may not have been)."""
    if isinstance(document, str | Path):
        return load_document(document)
    if isinstance(document, SchemaDocument):
        return parse_document(document.model_dump(mode="json", by_alias=True))
    return parse_document(dict(document))


def _readable(payload: SchemaPublished | None) -> SchemaDocument | None:
    """A published document, read by the rules it was published under (None: none, or
    unreadable — then whatever replaces it changes everything)."""
    if payload is None:
        return None
    try:
        return parse_document(payload.document, "published schema", strict=False)
    except SchemaDocumentError:
        return None


def diff_with_log(
    log: Log,
    state: StateReader,
    document: SchemaDocument | Mapping[str, Any] | str | Path | None = None,
) -> SchemaDiff:
    """What publishing ``document`` to ``log`` would change, and its impact on live data,
    read in one snapshot. Without a document: what the last publish changed (the previous
    schema against the one in force), with its impact on the data as it is now."""
    after = as_document(document) if document is not None else None
    with log.snapshot() as conn:
        if after is not None:
            return schema_diff(conn, state, _readable(published(log)), after)
        history = [
            p
            for e in log.iter_events(types=[SchemaPublished.event_type])
            if isinstance(p := payload_of(e), SchemaPublished)
        ]
        newest = _readable(history[-1] if history else None)
        if newest is None:
            raise SchemaDocumentError(f"no readable schema has been published to {log.describe()}")
        previous = _readable(history[-2]) if len(history) > 1 else None
        return schema_diff(conn, state, previous, newest)


def publish_schema(
    log: Log,
    state: StateReader,
    document: SchemaDocument | Mapping[str, Any] | str | Path,
    actor: Actor,
    *,
    force: bool = False,
) -> SchemaPublishResult | Rejected:
    """Append ``document`` unless it is the version in force, or unsafe and not ``force``d."""
    try:
        doc = as_document(document)
    except SchemaDocumentError as exc:
        return Rejected(error_code=ErrorCode.SCHEMA_INVALID, message=str(exc))
    version = doc.version()
    made: list[tuple[int, SchemaDiff, int, list[str]]] = []

    def decide(tx: Transaction) -> None:
        current = published(log)
        if current is not None and current.version == version:
            return
        diff = schema_diff(tx.conn, state, _readable(current), doc)
        if not diff.safe and not force:
            harm = [f"strand the live data of {', '.join(diff.stranded)}"] if diff.stranded else []
            if diff.invalid:
                harm.append(f"invalidate {diff.invalid} live node(s) or relationship(s)")
            raise GateRejection(
                ErrorCode.SCHEMA_CHANGE_UNSAFE,
                f"publishing {version} would {' and '.join(harm)} (`writegate schema diff "
                "FILE` shows how); publish with force (--force) to do it anyway",
                diff.model_dump(mode="json"),
            )
        diff = diff.model_copy(update={"forced": not diff.safe})
        event = SchemaPublished(
            document=doc.model_dump(mode="json", by_alias=True),
            version=version,
            diff=diff.model_dump(mode="json"),
        )
        seq = tx.emit(draft(event, [SCHEMA_STREAM])).seq
        before = _readable(current)
        indexed = index_labels(tx, state, before, doc, version)
        made.append((seq, diff, indexed, reword_labels(tx, before, doc, version)))

    try:
        log.append(actor, decide)
    except GateRejection as exc:
        return rejected(exc)
    return SchemaPublishResult(
        status="published" if made else "unchanged",
        schema_version=version,
        labels=len(doc.nodes),
        relationship_types=len(doc.relationships),
        seq=made[0][0] if made else None,
        diff=made[0][1] if made else None,
        indexed=made[0][2] if made else 0,
        reworded=made[0][3] if made else [],
    )
