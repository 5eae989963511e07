"""Where schema snapshots come from: a file, or the log itself.

A source only loads; the ``SchemaCache`` decides when to swap. Any failure to
load is a ``SchemaSourceUnavailable`` so the gate can keep its previous snapshot.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path
from typing import Protocol

from writegate.eventlog import Log
from writegate.gate.limits import Limits
from writegate.gate.schema.authority import AuthorityDoc
from writegate.gate.schema.document import SchemaDocumentError, parse_document
from writegate.gate.schema.loading import load_document
from writegate.gate.schema.registry import Schema, SchemaRegistry
from writegate.language import SchemaPublished, payload_of

SCHEMA_STREAM = "schema"


class SchemaSourceUnavailable(Exception):
    """The source could not produce a schema (file missing, nothing published, store down...).
    ``unreachable``: the store could not be asked (down, silent, or refusing the read), so
    asking again at once would likely wait out the same timeout: the ``SchemaCache`` answers
    writes from this failure for a while."""

    def __init__(self, message: str, *, unreachable: bool = False) -> None:
        super().__init__(message)
        self.unreachable = unreachable


@dataclass(frozen=True)
class LoadedSchema:
    registry: SchemaRegistry
    version: str
    # the policy the schema itself asks for; config and the environment may override it
    unknown_label_policy: str | None = None
    limits: Limits | None = None  # the document's own limits; the gate's setting wins
    # a log's schema: the ``schema`` stream's version it was read at (every write checks it
    # in its transaction, so a schema another process published binds the next write)
    stream_version: int | None = None
    # read-time confidence decay per extraction method (the document's ``half_lives``)
    half_lives: Mapping[str, timedelta] = field(default_factory=dict)
    authority: AuthorityDoc | None = None  # the document's ranks (``gate.schema.authority``)


class SchemaSource(Protocol):
    def describe(self) -> str: ...

    def load(self) -> LoadedSchema: ...


def loaded(schema: Schema) -> LoadedSchema:
    document = schema.document
    return LoadedSchema(
        schema,
        schema.version,
        schema.unknown_label_policy,
        document.limits,
        half_lives=document.half_lives or {},
        authority=document.authority,
    )


def published(log: Log) -> SchemaPublished | None:
    """The newest schema in the log (None if none was ever published): an index probe."""
    return _newest(log)[0]


def _newest(log: Log) -> tuple[SchemaPublished | None, int]:
    """The newest schema and the version it gave the ``schema`` stream (0: none)."""
    latest = log.latest(SCHEMA_STREAM)
    if latest is None:
        return None, 0
    payload = payload_of(latest)
    version = latest.streams.get(SCHEMA_STREAM, 0)
    return (payload if isinstance(payload, SchemaPublished) else None), version


class FileSchemaSource:
    """A YAML or JSON document on disk, re-read on every refresh."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def describe(self) -> str:
        return f"file:{self.path}"

    def load(self) -> LoadedSchema:
        try:
            return loaded(Schema(load_document(self.path)))
        except SchemaDocumentError as exc:
            raise SchemaSourceUnavailable(str(exc)) from exc


class LogSchemaSource:
    """The newest ``schema.published`` event in the log: schemas are history too."""

    def __init__(self, log: Log) -> None:
        self.log = log

    def describe(self) -> str:
        return f"log:{self.log.describe()}"

    def load(self) -> LoadedSchema:
        try:
            newest, stream_version = _newest(self.log)
        except Exception as exc:
            where = self.log.describe()
            raise SchemaSourceUnavailable(f"cannot read the log {where}: {exc}") from exc
        if newest is None:
            raise SchemaSourceUnavailable(
                f"no schema has been published to {self.log.describe()} "
                "(`writegate schema publish FILE`)"
            )
        try:
            # held to the rules it was published under, not to today's
            document = parse_document(newest.document, "published schema", strict=False)
        except SchemaDocumentError as exc:
            raise SchemaSourceUnavailable(str(exc)) from exc
        return replace(loaded(Schema(document)), stream_version=stream_version)
