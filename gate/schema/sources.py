"""Where schema snapshots come from: a file, or the log itself.

A source only loads; the ``SchemaCache`` decides when to swap. Any failure to
load is a ``SchemaSourceUnavailable`` so the gate can keep its previous snapshot.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from writegate.eventlog import EventLog
from writegate.gate.limits import Limits
from writegate.gate.schema.document import SchemaDocumentError, load_document, parse_document
from writegate.gate.schema.publishing import published
from writegate.gate.schema.registry import Schema, SchemaRegistry


class SchemaSourceUnavailable(Exception):
    """The source could not produce a schema (file missing, nothing published, store down...)."""


@dataclass(frozen=True)
class LoadedSchema:
    registry: SchemaRegistry
    version: str
    # the policy the schema itself asks for; config and the environment may override it
    unknown_label_policy: str | None = None
    limits: Limits | None = None  # the document's own limits; the gate's setting wins


class SchemaSource(Protocol):
    def describe(self) -> str: ...

    def load(self) -> LoadedSchema: ...


def loaded(schema: Schema) -> LoadedSchema:
    return LoadedSchema(schema, schema.version, schema.unknown_label_policy, schema.document.limits)


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

    def __init__(self, log: EventLog) -> None:
        self.log = log

    def describe(self) -> str:
        return f"log:{self.log.path}"

    def load(self) -> LoadedSchema:
        try:
            newest = published(self.log)
        except Exception as exc:
            raise SchemaSourceUnavailable(f"cannot read the log {self.log.path}: {exc}") from exc
        if newest is None:
            raise SchemaSourceUnavailable(
                f"no schema has been published to {self.log.path} (`writegate schema publish FILE`)"
            )
        try:
            document = parse_document(newest.document, "published schema")
        except SchemaDocumentError as exc:
            raise SchemaSourceUnavailable(str(exc)) from exc
        return loaded(Schema(document))
