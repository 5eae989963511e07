"""Schemas: the document format, the registry protocol, sources and the live cache."""

from writegate.gate.schema.cache import SchemaCache
from writegate.gate.schema.document import SchemaDocument, SchemaDocumentError, parse_document
from writegate.gate.schema.loading import load_document
from writegate.gate.schema.registry import (
    PropertySpec,
    RelationshipEntry,
    Schema,
    SchemaEntry,
    SchemaRegistry,
)
from writegate.gate.schema.sources import (
    FileSchemaSource,
    LoadedSchema,
    LogSchemaSource,
    SchemaSource,
    SchemaSourceUnavailable,
)

__all__ = [
    "FileSchemaSource",
    "LoadedSchema",
    "LogSchemaSource",
    "PropertySpec",
    "RelationshipEntry",
    "Schema",
    "SchemaCache",
    "SchemaDocument",
    "SchemaDocumentError",
    "SchemaEntry",
    "SchemaRegistry",
    "SchemaSource",
    "SchemaSourceUnavailable",
    "load_document",
    "parse_document",
]
