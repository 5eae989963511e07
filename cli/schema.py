"""``writegate schema …``: publish, show and move schema documents."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.markup import escape
from rich.table import Table

from writegate.cli.common import Context, emit_result, fail, fail_each, opened, pass_ctx
from writegate.cli.imports import schema_import_memorymesh
from writegate.cli.render import console, counted, emit_json, format_option
from writegate.cli.written import write_format
from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.models import Rejected
from writegate.gate.schema import SchemaDocumentError, SchemaSourceUnavailable, load_document
from writegate.gate.schema.publishing import SchemaPublishResult
from writegate.gate.schema.registry import (
    PropertySpec,
    RelationshipEntry,
    SchemaEntry,
    SchemaRegistry,
    named_labels,
    relationship_types,
    touches,
)

if TYPE_CHECKING:
    from writegate.gate.api import Gate
    from writegate.gate.schema import SchemaDocument
    from writegate.gate.schema.diff import SchemaDiff


@click.group()
def schema() -> None:
    """Publish and inspect schemas."""


@schema.command("publish")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Publish even if it strands or invalidates live data.")
@write_format
@pass_ctx
def schema_publish(ctx: Context, path: Path, force: bool, fmt: str, as_json: bool) -> None:
    """Validate a YAML/JSON schema and append it to the log (refused if unsafe)."""
    document = read_document(path, "SCHEMA_INVALID: ")
    with opened(ctx) as gate:
        publish(gate.publish_schema(document, actor=ctx.actor, force=force), fmt, as_json)


def read_document(path: Path, prefix: str = "") -> SchemaDocument:
    """The schema file, or every problem in it, one line each, and exit 1."""
    try:
        return load_document(path)
    except SchemaDocumentError as exc:
        fail_each([prefix + line for line in exc.lines])


def publish(result: SchemaPublishResult | Rejected, fmt: str, as_json: bool = False) -> None:
    """What a publish did, as a write command says it: a summary and the changes with their
    impact for people; with ``--format json`` the changes on stderr and the result on stdout.
    A refusal for harm is the harm, then one line."""
    from writegate.gate.schema.diff import SchemaDiff

    machine = fmt == "json" or as_json
    if isinstance(result, Rejected):
        if result.error_code == ErrorCode.SCHEMA_CHANGE_UNSAFE:
            _describe(SchemaDiff.model_validate(result.details), err=True)
        emit_result(result, text=not machine)
        return
    if machine:
        if result.diff is not None:
            _describe(result.diff, err=True)
        emit_result(result)
        return
    shape = (
        f"{counted(result.labels, 'label')}, "
        f"{counted(result.relationship_types, 'relationship type')}"
    )
    if result.status == "unchanged":
        click.echo(f"schema {result.schema_version} is already the log's ({shape})")
        return
    click.echo(f"published schema {result.schema_version} at seq {result.seq}: {shape}")
    if result.diff is not None and result.diff.before is not None:  # a first one adds all
        for line in result.diff.describe():
            click.echo(f"  {line}")
    if result.indexed:
        click.echo(f"  indexed {counted(result.indexed, 'live node')} for entity resolution")
    if result.reworded and result.diff is not None and result.diff.before is not None:
        labels = ", ".join(result.reworded)  # (a first schema has no index to make again)
        click.echo(f"  made the text index of {labels} again: its searchable properties changed")


def _describe(diff: SchemaDiff, *, err: bool = False) -> None:
    for line in diff.describe():
        click.echo(line, err=err)


@schema.command("diff")
@click.argument(
    "path", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@format_option("table", "json")
@pass_ctx
def schema_diff(ctx: Context, path: Path | None, fmt: str) -> None:
    """What publishing FILE would change and its impact on live data (no FILE: the last publish).

    Every key of the schema language is compared: labels, types, properties, enums, remaps,
    policies, review rules, resolution, limits, identity groups. The impact says what a change
    strands or invalidates, and how many live nodes a new review rule, review floor or
    resolution policy would have caught."""
    from writegate.gate.schema.publishing import diff_with_log

    document = read_document(path) if path is not None else None
    with opened(ctx, readonly=True) as gate:
        try:
            diff = diff_with_log(gate.log, gate.state, document)
        except SchemaDocumentError as exc:
            fail(str(exc))
    if fmt == "json":
        emit_json(diff)
    else:
        _describe(diff)


@schema.command("push-graph")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--projection",
    default="graph",
    show_default=True,
    help="The graph projection whose server holds the registry.",
)
@pass_ctx
def schema_push_graph(ctx: Context, path: Path, projection: str) -> None:
    """Write a schema document into the graph as seed 000's (:Schema) registry nodes."""
    from writegate.cli.config import GraphConfig

    settings = ctx.settings()
    config = settings.projections.get(projection)
    if not isinstance(config, GraphConfig):
        fail(f"{projection!r} is not a configured graph projection", 2)
    document = read_document(path)
    try:
        config.registry().publish(document)
    except Exception as exc:  # the driver's connection errors
        fail(f"cannot write to {config.describe()}: {exc}")
    click.echo(
        f"{len(document.nodes)} labels, {len(document.relationships)} relationship types "
        f"written to {config.describe()}"
    )


@schema.command("show")
@click.option(
    "--label",
    "labels",
    multiple=True,
    metavar="LABEL",
    help="Only this label (a synonym names its label) and the relationship types that "
    "touch it (repeatable) [default: every label].",
)
@format_option("table", "json")
@pass_ctx
def schema_show(ctx: Context, labels: tuple[str, ...], fmt: str) -> None:
    """Show the schema writes are checked against: labels and types with their keys, ends
    and remaps, each property's type (and whether search meets it), enum or edge, and what
    happens to a write (conflict policy, review rules and floor, entity resolution)."""
    as_json = fmt == "json"
    with opened(ctx, readonly=True) as gate:
        try:
            snapshot = gate.current_schema()
        except (SchemaSourceUnavailable, SchemaDocumentError) as exc:
            fail(f"SCHEMA_SOURCE_UNAVAILABLE: {exc}")
        registry = snapshot.registry
        try:
            only = named_labels(registry, labels) if labels else None
        except GateRejection as exc:
            fail(f"{exc.code.value}: {exc.message}")
        document = getattr(registry, "document", None)
        if as_json and document is not None:
            body = document.model_dump(mode="json", by_alias=True)
            if only is not None:
                body["nodes"] = {k: v for k, v in body["nodes"].items() if k in only}
                body["relationships"] = {
                    k: v
                    for k, v in body["relationships"].items()
                    if touches(_relationship(registry, k), only)
                }
            shown = {"version": snapshot.version, "document": body}
            click.echo(json.dumps(shown, separators=(",", ":")))  # one value, one line
            return
        policy = gate.unknown_label_policy(snapshot)
        _show(registry, document, policy, snapshot.version, gate, only)


def _relationship(registry: SchemaRegistry, rtype: str) -> RelationshipEntry:
    rel = registry.get_relationship_type(rtype)
    assert rel is not None  # a type the document declares
    return rel


def _show(
    registry: SchemaRegistry,
    document: SchemaDocument | None,
    policy: str,
    version: str,
    gate: Gate,
    only: list[str] | None = None,
) -> None:
    """The schema as an operator reads it: settings and policies first, one row a label or
    type (keys, required, remaps, what happens to its writes), then one row a property."""
    from writegate.gate.schema.changes import rule_text

    out = console()
    say = out.print  # wrapped to the terminal, as the tables are
    say(escape(f"schema {version} from {gate.schema.source.describe()}"))
    say(f"unknown-label policy: {policy}")
    say(f"fallback label: {registry.fallback_label() or '(none)'}")
    if document is not None:
        default = document.conflict or "supersede"
        say(f"conflict policy: {default} (where a label, type or property sets none)")
        for rule in document.review_rules or ():
            say(escape(f"review rule: {rule_text(rule.model_dump())}"))
        for group, labels in (document.identity_groups or {}).items():
            say(f"identity group {group}: {', '.join(labels)}")
    types = Table(
        "label / \\[TYPE]", "keys / ends", "required", "remaps from", "policies", title="types"
    )
    properties = Table("property", "type", "values / edge", "conflict", title="properties")
    for label in registry.all_canonical_labels() if only is None else only:
        entry = registry.get_entry(label)
        assert entry is not None
        keys = ",".join(entry.merge_keys) or "-"
        types.add_row(f":{label}", keys, *_entry_columns(entry))
        _property_rows(properties, label, entry.properties)
    for rtype in relationship_types(registry):
        rel = _relationship(registry, rtype)
        if not touches(rel, only):
            continue
        ends = f"{'|'.join(rel.from_labels) or '*'} -> {'|'.join(rel.to_labels) or '*'}"
        types.add_row(escape(f"[{rtype}]"), ends, *_entry_columns(rel))
        _property_rows(properties, rtype, rel.properties)
    out.print(types)
    out.print(properties)


def _entry_columns(entry: SchemaEntry | RelationshipEntry) -> tuple[str, str, str]:
    """Required, remaps, and what happens to a write: its conflict policy, review floor,
    entity resolution, one-per-start-node, closed property set."""
    policies = [f"conflict {entry.conflict}"]
    if entry.review_below is not None:
        policies.append(f"review below {entry.review_below:g}")
    resolution = getattr(entry, "resolution", None)
    if resolution is not None:
        identity = f"; identity {', '.join(resolution.identity)}" if resolution.identity else ""
        policies.append(
            f"resolution {resolution.policy} ({resolution.kind}; proposes at "
            f"{resolution.propose_threshold:g}, lands at {resolution.auto_threshold:g}{identity})"
        )
    if getattr(entry, "functional", False):
        policies.append("functional")
    if not entry.additional_properties:
        policies.append("closed")
    return (
        ",".join(entry.required_properties) or "-",
        ",".join(entry.remaps_from) or "-",
        escape("; ".join(policies)),
    )


def _property_rows(table: Table, owner: str, specs: Mapping[str, PropertySpec]) -> None:
    for name, spec in specs.items():
        kind = f"array of {spec.items}" if spec.type == "array" and spec.items else spec.type
        values = ", ".join(map(str, spec.enum)) if spec.enum else ""
        if spec.relationship is not None:
            ref = spec.relationship
            values = f"-> [{ref.type}] :{ref.to} by {ref.key}"
        conflict = "many" if spec.many else spec.conflict or ""
        kind = (kind or "any") + ("" if spec.searchable else ", not searched")
        table.add_row(f"{owner}.{name}", kind, escape(values), conflict)


schema.add_command(schema_import_memorymesh)
