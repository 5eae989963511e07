"""What a consistent schema document is: each rule yields a ``Problem`` at its place.

``consistency_problems`` is what every document must satisfy, old or new (it is what the
gate relies on); ``authoring_problems`` is what a document must satisfy to be published
now — rules that came later, so documents already in a log are not held to them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from writegate.gate.identifiers import is_identifier, is_protected

if TYPE_CHECKING:
    from writegate.gate.schema.document import PropertyDoc, SchemaDocument

DocPath = tuple[str | int, ...]
# where each key or item of a document was read: path (as strings) -> (line, column), 1-based
Positions = Mapping[tuple[str, ...], tuple[int, int]]


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a document, at ``path`` (``at``: its own line and column when
    that is not the position of ``path``, as for a duplicate key)."""

    path: DocPath
    message: str
    at: tuple[int, int] | None = None

    def render(self, origin: str, positions: Positions | None) -> str:
        where = ".".join(str(p) for p in self.path) or "document"
        at = self.at or _position(self.path, positions or {})
        prefix = f"{origin}:{at[0]}:{at[1]}" if at else origin
        return f"{prefix}: {where}: {self.message}"


def _position(path: DocPath, positions: Positions) -> tuple[int, int] | None:
    """The position of ``path``, else of its nearest ancestor that was read from a file."""
    keys = tuple(str(p) for p in path)
    while keys:
        if keys in positions:
            return positions[keys]
        keys = keys[:-1]
    return None


def consistency_problems(doc: SchemaDocument) -> list[Problem]:
    problems: list[Problem] = []

    def name(value: str, path: DocPath) -> None:
        if not is_identifier(value):
            problems.append(Problem(path, f"{value!r} is not a valid identifier"))
        elif is_protected(value):
            problems.append(Problem(path, f"{value!r} is a gate-computed field"))

    def properties(owner: DocPath, props: Mapping[str, PropertyDoc]) -> None:
        for prop, spec in props.items():
            at = (*owner, "properties", prop)
            name(prop, at)
            if spec.items and spec.type != "array":
                problems.append(Problem((*at, "items"), "'items' only applies to type array"))
            for i, value in enumerate(spec.enum or []):
                if not _fits(value, spec.type, spec.items):
                    problems.append(
                        Problem((*at, "enum", i), f"enum value {value!r} is not {spec.type}")
                    )
            if (ref := spec.relationship) is not None:
                if ref.type not in doc.relationships:
                    problems.append(
                        Problem(
                            (*at, "relationship", "type"),
                            f"relationship type {ref.type!r} undeclared",
                        )
                    )
                if ref.to not in doc.nodes:
                    problems.append(
                        Problem(
                            (*at, "relationship", "to"),
                            f"relationship target {ref.to!r} undeclared",
                        )
                    )

    for label, node in doc.nodes.items():
        if not is_identifier(label):
            problems.append(Problem(("nodes", label), f"{label!r} is not a valid identifier"))
        properties(("nodes", label), node.properties)
        for field in ("merge_keys", "required"):
            for i, key in enumerate(getattr(node, field)):
                name(key, ("nodes", label, field, i))
        for i, key in enumerate(node.merge_keys):
            spec = node.properties.get(key)
            if spec is not None and spec.type == "array":
                problems.append(
                    Problem(
                        ("nodes", label, "merge_keys", i), f"merge key {key!r} must be a scalar"
                    )
                )
            if spec is not None and not spec.searchable:
                problems.append(
                    Problem(
                        ("nodes", label, "properties", key, "searchable"),
                        f"merge key {key!r} must stay searchable: it names the node",
                    )
                )
        for prop, spec in node.properties.items():
            if spec.personal and not node.personal:
                problems.append(
                    Problem(
                        ("nodes", label, "properties", prop, "personal"),
                        "a personal property needs a personal label (its node is the subject)",
                    )
                )
            if spec.retention is not None and not (spec.personal and node.personal):
                problems.append(_unsealed(("nodes", label, "properties", prop, "retention")))
    for rtype, rel in doc.relationships.items():
        for prop, spec in rel.properties.items():
            if spec.personal:
                problems.append(
                    Problem(
                        ("relationships", rtype, "properties", prop, "personal"),
                        "only a node's properties may be personal (a relationship is no subject)",
                    )
                )
            if spec.retention is not None:
                problems.append(
                    _unsealed(("relationships", rtype, "properties", prop, "retention"))
                )
            if not spec.searchable:
                problems.append(
                    Problem(
                        ("relationships", rtype, "properties", prop, "searchable"),
                        "only a node's properties may leave the text index "
                        "(a relationship's are searched with its type)",
                    )
                )
        if not is_identifier(rtype):
            problems.append(
                Problem(("relationships", rtype), f"{rtype!r} is not a valid identifier")
            )
        properties(("relationships", rtype), rel.properties)
        for i, key in enumerate(rel.required):
            name(key, ("relationships", rtype, "required", i))
        for end, labels in (("from", rel.from_labels), ("to", rel.to_labels)):
            for i, label in enumerate(labels):
                if label not in doc.nodes:
                    problems.append(
                        Problem(
                            ("relationships", rtype, end, i),
                            f"endpoint label {label!r} undeclared",
                        )
                    )
    problems += _remap_problems(doc)
    problems += _group_problems(doc)
    for i, rule in enumerate(doc.review_rules or []):
        for j, label in enumerate(rule.labels):
            if label not in doc.nodes and label not in doc.relationships:
                problems.append(
                    Problem(
                        ("review_rules", i, "labels", j),
                        f"{label!r} is neither a declared label nor a relationship type",
                    )
                )
    if doc.fallback_label is not None and doc.fallback_label not in doc.nodes:
        problems.append(
            Problem(
                ("fallback_label",),
                f"fallback_label {doc.fallback_label!r} is not a declared node label",
            )
        )
    if doc.observation_retention is not None and not doc.personal_observations:
        problems.append(_unsealed(("observation_retention",)))
    for path, period in _retentions(doc):
        if period <= timedelta(0):
            problems.append(Problem(path, f"a retention must be positive, not {period}"))
    return problems


def _unsealed(path: DocPath) -> Problem:
    """A retention declared where values are not sealed: they cannot be erased without
    breaking the chain (only a sealed value leaves the log while its event still proves)."""
    return Problem(
        path,
        "a retention needs sealed values: declare it on a personal property of a personal "
        "label, or as observation_retention with personal_observations",
    )


def _retentions(doc: SchemaDocument) -> list[tuple[DocPath, timedelta]]:
    found: list[tuple[DocPath, timedelta]] = []
    if doc.observation_retention is not None:
        found.append((("observation_retention",), doc.observation_retention))
    for kind, owners in (("nodes", doc.nodes), ("relationships", doc.relationships)):
        for owner, entry in owners.items():
            for prop, spec in entry.properties.items():
                if spec.retention is not None:
                    found.append(((kind, owner, "properties", prop, "retention"), spec.retention))
    return found


def _group_problems(doc: SchemaDocument) -> list[Problem]:
    """Each identity group names two or more declared labels, each declaring ``resolution``
    (its nodes are found by their keys), and no label is in two groups."""
    problems: list[Problem] = []
    seen: dict[str, str] = {}
    for group, labels in (doc.identity_groups or {}).items():
        at: DocPath = ("identity_groups", group)
        if len(set(labels)) < 2:
            problems.append(Problem(at, "an identity group names two or more labels"))
        for i, label in enumerate(labels):
            node = doc.nodes.get(label)
            if node is None:
                problems.append(Problem((*at, i), f"label {label!r} undeclared"))
            elif node.resolution is None:
                problems.append(
                    Problem((*at, i), f"{label!r} must declare resolution to be in a group")
                )
            if label in seen and seen[label] != group:
                problems.append(Problem((*at, i), f"{label!r} is also in group {seen[label]!r}"))
            seen.setdefault(label, group)
    return problems


def _remap_problems(doc: SchemaDocument) -> list[Problem]:
    """Each alias names one canonical label; an alias that is itself canonical is a chain
    (remaps do not chain) or, where it leads back, a cycle: one problem for each."""
    problems: list[Problem] = []
    targets: dict[str, str] = {}  # alias -> canonical
    where: dict[str, DocPath] = {}
    declared = {
        **dict.fromkeys(doc.nodes, "nodes"),
        **dict.fromkeys(doc.relationships, "relationships"),
    }
    for kind, entries in (("nodes", doc.nodes), ("relationships", doc.relationships)):
        for canonical, entry in entries.items():
            for i, raw in enumerate(entry.remaps_from):
                alias, path = raw.removeprefix(":"), (kind, canonical, "remaps_from", i)
                if not is_identifier(alias):
                    problems.append(Problem(path, f"{alias!r} is not a valid identifier"))
                elif alias in targets and targets[alias] != canonical:
                    problems.append(
                        Problem(
                            path, f"{alias!r} remaps to both {targets[alias]!r} and {canonical!r}"
                        )
                    )
                else:
                    targets[alias], where[alias] = canonical, path
    reported: set[frozenset[str]] = set()
    for alias, target in targets.items():
        if alias not in declared:
            continue
        loop = [alias, target]
        while loop[-1] in targets and loop[-1] not in loop[:-1]:
            loop.append(targets[loop[-1]])
        if loop[-1] == alias:
            if frozenset(loop) not in reported:
                reported.add(frozenset(loop))
                problems.append(Problem(where[alias], "remap cycle: " + " -> ".join(loop)))
            continue
        problems.append(
            Problem(
                where[alias],
                f"{alias!r} (-> {target!r}) is itself canonical: remaps do not chain (move "
                f"{alias}'s own remaps_from to {target} and drop {alias}, or drop this remap)",
            )
        )
    return problems


def authoring_problems(doc: SchemaDocument) -> list[Problem]:
    problems: list[Problem] = []
    if not doc.nodes:
        problems.append(Problem(("nodes",), "declares no labels: a schema needs at least one"))
    for label, node in doc.nodes.items():
        declared = {*node.properties, *node.merge_keys}
        for i, prop in enumerate(node.required):
            if prop not in declared:
                problems.append(
                    Problem(
                        ("nodes", label, "required", i),
                        f"{prop!r} is not a declared property of {label} "
                        "(declare it under properties, or as a merge key)",
                    )
                )
        for prop, spec in node.properties.items():
            problems += _edge_problems(doc, label, prop, spec)
    for rtype, rel in doc.relationships.items():
        for i, prop in enumerate(rel.required):
            if prop not in rel.properties:
                problems.append(
                    Problem(
                        ("relationships", rtype, "required", i),
                        f"{prop!r} is not a declared property of {rtype} "
                        "(declare it under properties)",
                    )
                )
    if doc.case_insensitive_remap:
        problems += _case_problems(doc)
    return problems


def _edge_problems(doc: SchemaDocument, label: str, prop: str, spec: PropertyDoc) -> list[Problem]:
    """A relationship property must make an edge the schema accepts: its type allows this
    label as start and its target as end, and ``key`` is the target's merge key."""
    ref = spec.relationship
    if ref is None or ref.type not in doc.relationships or ref.to not in doc.nodes:
        return []  # undeclared: a consistency problem already
    at = ("nodes", label, "properties", prop, "relationship")
    rel, target = doc.relationships[ref.type], doc.nodes[ref.to]
    problems = []
    if rel.from_labels and label not in rel.from_labels:
        problems.append(Problem((*at, "type"), f"{ref.type} does not allow {label} as its start"))
    if rel.to_labels and ref.to not in rel.to_labels:
        problems.append(Problem((*at, "to"), f"{ref.type} does not allow {ref.to} as its end"))
    if target.merge_keys and [ref.key] != target.merge_keys:
        problems.append(
            Problem(
                (*at, "key"),
                f"{ref.key!r} is not the merge key of {ref.to} ({', '.join(target.merge_keys)})",
            )
        )
    return problems


def _case_problems(doc: SchemaDocument) -> list[Problem]:
    """With ``case_insensitive_remap`` a name is found by any casing, so two names that
    differ only in case must mean the same thing."""
    problems: list[Problem] = []
    for kind, entries in (("nodes", doc.nodes), ("relationships", doc.relationships)):
        meaning = {canonical.casefold(): (canonical, canonical) for canonical in entries}
        for canonical, entry in entries.items():
            for i, raw in enumerate(entry.remaps_from):
                alias = raw.removeprefix(":")
                seen, target = meaning.setdefault(alias.casefold(), (alias, canonical))
                if target != canonical:
                    other = f"the name {target}" if seen == target else f"{seen!r} (-> {target})"
                    problems.append(
                        Problem(
                            (kind, canonical, "remaps_from", i),
                            f"{alias!r} (-> {canonical}) differs from {other} only in case, and "
                            "case_insensitive_remap finds both by any casing",
                        )
                    )
    return problems


def _fits(value: object, type_: str | None, items: str | None) -> bool:
    if type_ == "array":
        return items is None or _fits(value, items, None)
    return type_ is None or value_has_type(value, type_)


def value_has_type(value: object, type_: str) -> bool:
    """JSON-Schema-like type test for one scalar (``number`` accepts integers, not booleans)."""
    if type_ == "string":
        return isinstance(value, str)
    if type_ == "boolean":
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if type_ == "integer":
        return isinstance(value, int)
    if type_ == "number":
        return isinstance(value, int | float)
    return False
