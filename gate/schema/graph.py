"""Seed 000's reference registry: the schema lives in the graph as ``(:Schema)`` nodes.

It reads exactly the seed's query (``MATCH (s:Schema {allowed: true}) RETURN s.name AS
label, s.required_properties AS required_properties, s.absorbs AS remaps_from``) plus
the optional ``s.merge_keys`` and ``s.fallback`` (the fallback label), and relationship
types from ``(:SchemaRelationship {allowed: true})`` nodes (``name``, ``absorbs``,
``from``, ``to``, ``required_properties``). What it reads becomes an ordinary schema
document, validated like any other, so a bad node in the graph is a
``SCHEMA_SOURCE_UNAVAILABLE`` and the previous snapshot keeps serving.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from neo4j import Driver, ManagedTransaction
from neo4j.exceptions import Neo4jError

from writegate.eventlog import one_line
from writegate.gate.schema.document import SchemaDocument, SchemaDocumentError, parse_document
from writegate.gate.schema.registry import Schema
from writegate.gate.schema.sources import LoadedSchema, SchemaSourceUnavailable, loaded

NODES_QUERY = (
    "MATCH (s:Schema {allowed: true}) "
    "RETURN s.name AS label, s.required_properties AS required_properties, "
    "s.absorbs AS remaps_from, s.merge_keys AS merge_keys, s.fallback AS fallback"
)
Rows = tuple[list[dict[str, Any]], list[dict[str, Any]]]  # the label rows, the type rows
RELATIONSHIPS_QUERY = (
    "MATCH (r:SchemaRelationship {allowed: true}) "
    "RETURN r.name AS type, r.absorbs AS remaps_from, r.from AS from_labels, "
    "r.to AS to_labels, r.required_properties AS required_properties"
)


class GraphSchemaSource:
    """The registry on a Bolt server. The caller hands it a driver factory (the graph
    projection's connection, configured to fail fast: a schema read that waits on an
    unreachable server holds up every write) and the database to read."""

    def __init__(self, driver: Callable[[], Driver], database: str | None, address: str) -> None:
        self._driver = driver
        self.database = database
        self.address = address

    def describe(self) -> str:
        return f"graph:{self.address}"

    def _read(self, tx: ManagedTransaction) -> Rows:
        return tx.run(NODES_QUERY).data(), tx.run(RELATIONSHIPS_QUERY).data()

    def load(self) -> LoadedSchema:
        nodes, relationships = self._fetch()
        if not nodes:
            raise SchemaSourceUnavailable(
                f"{self.describe()}: no (:Schema {{allowed: true}}) nodes"
            )
        try:
            # not strict: seed 000's registry declares required properties by name alone
            document = parse_document(
                _document(nodes, relationships), self.describe(), strict=False
            )
        except SchemaDocumentError as exc:
            raise SchemaSourceUnavailable(str(exc)) from exc
        return loaded(Schema(document))

    def _fetch(self) -> Rows:
        """The registry's rows: one attempt (a server that could not be reached is not asked
        again at once: ``SchemaCache``)."""
        try:
            with self._driver() as driver, driver.session(database=self.database) as s:
                rows: Rows = s.execute_read(self._read)
        except Exception as exc:  # the driver's connection errors are not all Neo4jError
            named = "" if isinstance(exc, Neo4jError | OSError) else f"{type(exc).__name__}: "
            message = f"{self.describe()}: {named}{one_line(exc)}"
            raise SchemaSourceUnavailable(message, unreachable=True) from exc
        return rows

    def publish(self, document: SchemaDocument) -> None:
        """Write a document into the graph as registry nodes (replacing the ones there)."""

        def write(tx: ManagedTransaction) -> None:
            tx.run("MATCH (s:Schema) DETACH DELETE s").consume()
            tx.run("MATCH (r:SchemaRelationship) DETACH DELETE r").consume()
            tx.run(
                "UNWIND $rows AS r CREATE (s:Schema) SET s = r",
                rows=[
                    {
                        "name": label,
                        "allowed": True,
                        "required_properties": node.required,
                        "absorbs": node.remaps_from,
                        "merge_keys": node.merge_keys,
                        "fallback": label == document.fallback_label,
                    }
                    for label, node in document.nodes.items()
                ],
            ).consume()
            tx.run(
                "UNWIND $rows AS r CREATE (s:SchemaRelationship) SET s = r",
                rows=[
                    {
                        "name": rtype,
                        "allowed": True,
                        "absorbs": rel.remaps_from,
                        "from": rel.from_labels,
                        "to": rel.to_labels,
                        "required_properties": rel.required,
                    }
                    for rtype, rel in document.relationships.items()
                ],
            ).consume()

        with self._driver() as driver, driver.session(database=self.database) as s:
            s.execute_write(write)


def _document(nodes: list[dict[str, Any]], relationships: list[dict[str, Any]]) -> dict[str, Any]:
    fallback = [row["label"] for row in nodes if row.get("fallback")]
    return {
        "name": "graph-registry",
        "fallback_label": fallback[0] if fallback else None,
        "nodes": {
            row["label"]: {
                "merge_keys": list(row.get("merge_keys") or []),
                "required": list(row.get("required_properties") or []),
                "remaps_from": list(row.get("remaps_from") or []),
            }
            for row in nodes
        },
        "relationships": {
            row["type"]: {
                "from": list(row.get("from_labels") or []),
                "to": list(row.get("to_labels") or []),
                "remaps_from": list(row.get("remaps_from") or []),
                "required": list(row.get("required_properties") or []),
            }
            for row in relationships
        },
    }
