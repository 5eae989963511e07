"""What a publish indexes: the live nodes of each label whose resolution it switches on or
re-keys, and the text of each label whose searchable properties it changes
(``language.indexing``).

A label's keys change when a publish gives it resolution, or changes what its keys are made
of (the name's property or kind, identity and evidence fields, stop suffixes — and the merge
keys when the name is the one merge key); a policy or a threshold changes no key. Its nodes
are read a page at a time, in identity order, between the events that index them, so a
publish holds one page in memory however many nodes the label has. A label's text is made
again by the read model from one ``label.searchable`` event (it pages through the label's
rows itself).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from writegate.eventlog import Transaction
from writegate.gate.personal import personal_of
from writegate.gate.resolution.matching import keys_for, name_of
from writegate.gate.schema.document import NodeTypeDoc, ResolutionDoc, SchemaDocument
from writegate.gate.schema.registry import Schema
from writegate.language import (
    IndexedNode,
    LabelSearchable,
    NodeRef,
    NodesIndexed,
    draft,
    resolution_stream,
    search_stream,
)
from writegate.projections.state import NodeRow, StateReader

BATCH = 500
"""Nodes one ``nodes.indexed`` event indexes."""
_NOT_KEYS = {"policy", "auto_threshold", "propose_threshold"}


def keying(node: NodeTypeDoc | None) -> Any:
    """What a label's blocking keys are made of (None: it does not resolve)."""
    rules = node.resolution if node is not None else None
    if node is None or rules is None:
        return None
    made_of = rules.model_dump(mode="json", exclude=_NOT_KEYS)
    return made_of, node.merge_keys if rules.name is None else None


def rekeyed(before: SchemaDocument | None, after: SchemaDocument) -> list[str]:
    """The labels whose nodes ``after`` indexes anew."""
    was = before.nodes if before is not None else {}
    return [
        label
        for label, node in after.nodes.items()
        if (made_of := keying(node)) is not None and made_of != keying(was.get(label))
    ]


def index_labels(
    tx: Transaction,
    state: StateReader,
    before: SchemaDocument | None,
    after: SchemaDocument,
    version: str,
) -> int:
    """Append the events indexing the live nodes of every label ``after`` re-keys, a
    personal label's keys sealed with each node's subject; how many nodes it indexed."""
    labels = rekeyed(before, after)
    if not labels:
        return 0
    personal = personal_of(Schema(after))
    before_sealing = tx.sealing
    if personal is not None:
        tx.sealing = personal.sealer(tx)
    indexed = 0
    try:
        for label in labels:
            rules = after.nodes[label].resolution
            assert rules is not None  # ``rekeyed`` names resolving labels only
            for batch in _batches(tx, state, label, rules):
                event = NodesIndexed(label=label, schema_version=version, nodes=batch)
                tx.emit(draft(event, [resolution_stream(label)]))
                indexed += len(batch)
    finally:
        tx.sealing = before_sealing
    return indexed


def _batches(
    tx: Transaction, state: StateReader, label: str, rules: ResolutionDoc
) -> Iterator[list[IndexedNode]]:
    after = ""
    while page := list(state.nodes_labelled(tx.conn, label, after, BATCH)):
        yield [_indexed(row, label, rules) for row in page]
        after = page[-1].identity


def _indexed(row: NodeRow, label: str, rules: ResolutionDoc) -> IndexedNode:
    """A node and its keys as a write of it would compute them now."""
    node = {**row.properties, **row.keys}
    keys = keys_for(rules, label, name_of(rules, node, row.keys), node)
    ref = NodeRef(identity=row.identity, label=row.label, keys=row.keys)
    return IndexedNode(node=ref, resolution_keys=keys)


def reword_labels(
    tx: Transaction, before: SchemaDocument | None, after: SchemaDocument, version: str
) -> list[str]:
    """Append a ``label.searchable`` event for every label whose searchable properties
    ``after`` changes (a first publish: of every label keeping any out, as nodes written
    under a schema file may be there); those labels."""
    now, was = Schema(after), Schema(before) if before is not None else None

    def hidden(schema: Schema | None, label: str) -> list[str]:
        entry = schema.get_entry(label) if schema is not None else None
        return entry.unsearchable if entry is not None else []

    changed = [label for label in after.nodes if hidden(now, label) != hidden(was, label)]
    for label in changed:
        event = LabelSearchable(
            label=label, schema_version=version, unsearchable=hidden(now, label)
        )
        tx.emit(draft(event, [search_stream(label)]))
    return changed
