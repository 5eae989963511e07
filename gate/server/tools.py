"""How a tool is defined: a typed function, its argument model in, its result model out.

``@tool`` turns ``def write_node(call: ToolCall, args: WriteNodeArgs) -> WriteNodeResult``
into a ``ToolSpec``: the argument model both validates the call and is published as the
tool's ``inputSchema``; the result model is published, flattened, as its
``outputSchema``; the docstring is the description. Schemas are made compact for the
model reading them: references inlined, titles dropped, and one flat output object
(the success fields and the seed's rejection fields, all optional but ``status``) —
an ``anyOf`` of ``$ref``s costs clients that validate results ten times as much.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Sequence
from copy import copy
from dataclasses import dataclass, replace
from functools import cache
from types import UnionType
from typing import Any, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

import mcp_types as types
from pydantic import BaseModel, create_model
from pydantic.fields import FieldInfo

from writegate.eventlog import Actor
from writegate.gate.api import Gate
from writegate.gate.errors import GateRejection
from writegate.gate.jobs import Jobs
from writegate.gate.models import CodeOf, ProposedResult, Rejected, parse_request
from writegate.gate.reads.reader import GraphReader
from writegate.gate.writing import Refusing, WriteGuard

Family = Literal["generic", "labels", "always"]  # which `serve --tools` choice shows it
A = TypeVar("A", bound=BaseModel)


@dataclass(frozen=True)
class ToolCall:
    """Everything one call may use; the actor comes from authentication, never from arguments."""

    gate: Gate
    reader: GraphReader
    actor: Actor
    guard: WriteGuard
    raw: dict[str, Any]  # the arguments exactly as the agent sent them
    roles: tuple[str, ...] = ()  # the credential's roles (an admin sees every job)
    jobs: Jobs | None = None  # the server's jobs (None: it runs none)
    scopes: frozenset[str] | None = None  # what ``reader`` sees (None: the whole graph)
    writes: frozenset[str] | None = None  # the scopes a write may touch (None: every one)
    # a batch's items aimed at nodes outside ``writes``: refused as aimed at nothing
    unseen: dict[int, Refusing] = dataclasses.field(default_factory=dict)


Run = Callable[[ToolCall, Any], BaseModel]


@dataclass(frozen=True)
class ToolSpec:
    name: str
    group: str  # the policy group: write | read | schema | audit
    description: str
    arguments: type[BaseModel]
    result: type[BaseModel]
    run: Run
    read_only: bool = False
    destructive: bool = False
    family: Family = "always"
    code_of: CodeOf | None = None  # precise codes for validation failures (per-label tools)
    holds: bool = False  # may answer ProposedResult: the write was held for review
    gated: bool = False  # a graph tool: answers {disabled: true} while its scopes are off
    labels: tuple[str, ...] = ()  # the labels a per-label tool writes (its grant is checked)
    also: tuple[type[BaseModel], ...] = ()  # other answers it gives (write_node: a batch's)

    def invoke(self, call: ToolCall) -> BaseModel:
        """Validate the raw arguments with the published model, then run. A write refused
        here is recorded like one the gate refused (the rejections table)."""
        try:
            args = parse_request(self.arguments, call.raw, self.code_of)
        except GateRejection as exc:
            if self.group != "write":
                raise
            return call.gate.writer.refused(call.actor, self.name, exc, call.raw)
        return self.run(call, args)

    def input_schema(self) -> dict[str, Any]:
        return input_schema(self.arguments)

    def output_schema(self) -> dict[str, Any]:
        return output_schema(self.result, *self.also, holds=self.holds, gated=self.gated)

    def annotations(self) -> types.ToolAnnotations:
        """The hints a host asks before it lets a call run (read-only; else destructive or
        not), and only those: destructive and idempotent mean nothing for a read (MCP's
        words), and a hint left at its default is a sentence no client needs."""
        if self.read_only:
            return types.ToolAnnotations(read_only_hint=True)
        return types.ToolAnnotations(destructive_hint=None if self.destructive else False)

    def with_vocabulary(self, vocabulary: Vocabulary) -> ToolSpec:
        """The spec publishing the snapshot's methods, and where it writes a node or a
        relationship, its labels and types (a deletion names what exists: the names would
        only grow its schema with the schema's)."""
        if self.destructive:
            vocabulary = Vocabulary(vocabulary.methods)
        return replace(self, arguments=with_vocabulary(self.arguments, vocabulary))


def tool(
    group: str,
    *,
    read_only: bool = False,
    destructive: bool = False,
    family: Family = "always",
    gated: bool = False,
) -> Callable[[Callable[[ToolCall, A], BaseModel]], ToolSpec]:
    """Create or update one node, merged on its label and merge keys. Labels and property
    types are checked against the schema (get_schema); confidence is computed from
    reliability and extraction_method. Said again: unchanged, or corroborated from a new
    source (its confidence rises)."""

    def define(function: Callable[[ToolCall, A], BaseModel]) -> ToolSpec:
        hints = get_type_hints(function)
        parameters = list(inspect.signature(function).parameters)
        result, *also = _success(hints["return"])
        returned = hints["return"]
        return ToolSpec(
            name=function.__name__,
            group=group,
            description=inspect.cleandoc(function.__doc__ or "").replace("\n", " "),
            arguments=hints[parameters[1]],
            result=result,
            also=tuple(also),
            run=function,
            read_only=read_only,
            destructive=destructive,
            family=family,
            holds=ProposedResult in get_args(returned),
            gated=gated,
        )

    return define


def _success(annotation: Any) -> list[type[BaseModel]]:
    """The models a tool answers with when it does what was asked, the first its own."""
    members = get_args(annotation) if get_origin(annotation) in (Union, UnionType) else [annotation]
    found = [m for m in members if isinstance(m, type) and m not in (Rejected, ProposedResult)]
    if not found or not all(issubclass(m, BaseModel) for m in found):
        raise TypeError(f"a tool returns models (or them or Rejected), not {annotation!r}")
    return found


# -- the published schemas -----------------------------------------------------------------

METHODS_NOTE = "How it was obtained."


@dataclass(frozen=True)
class Vocabulary:
    """The names a snapshot gives the generic tools' open fields: the extraction methods
    the formula accepts (published as an enum), and the labels and relationship types,
    named in ``label``'s and ``type``'s descriptions — not as enums, since a synonym the
    schema remaps is a valid value a validating client would refuse."""

    methods: tuple[str, ...]
    labels: tuple[str, ...] = ()
    types: tuple[str, ...] = ()

    def names(self, field: str) -> tuple[str, ...]:
        return {"label": self.labels, "type": self.types}.get(field, ())


@cache
def with_vocabulary(model: type[BaseModel], vocabulary: Vocabulary) -> type[BaseModel]:
    """``model`` publishing the snapshot's names (the gate still checks every value itself:
    an unknown method is seed 000's ``INVALID_EXTRACTION_METHOD``)."""
    fields: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        if name == "extraction_method":
            extra: dict[str, Any] = {"enum": list(vocabulary.methods)}
            fields[name] = _republished(field, field.description or METHODS_NOTE, extra)
        elif names := vocabulary.names(name):
            fields[name] = _republished(field, f"{field.description} One of {', '.join(names)}.")
    return create_model(model.__name__, __base__=model, **fields) if fields else model


def _republished(field: FieldInfo, description: str, extra: dict[str, Any] | None = None) -> Any:
    """The field as it validates (its type, default, bounds), described anew."""
    published = copy(field)
    published.description = description
    if extra is not None:
        published.json_schema_extra = extra
    return (field.annotation, published)


@cache
def input_schema(model: type[BaseModel]) -> dict[str, Any]:
    return compact(model.model_json_schema(by_alias=True))


@cache
def output_schema(
    model: type[BaseModel], *also: type[BaseModel], holds: bool = False, gated: bool = False
) -> dict[str, Any]:
    """The result's top-level fields, each by its JSON type only, all optional, and
    ``status`` naming every answer a call may give (``rejected``; ``proposed`` for a write
    that may be held for review; for a graph tool, ``disabled``). A rejection or a
    proposal validates against it too — it lists no required field and forbids none — so
    its own fields (``docs/mcp-tools.md``) are not repeated in every tool's schema: what a
    client checks on every call and an agent reads once should cost little. A tool with
    ``also`` answers (write_node's batch) publishes every field of each, a field they
    share by the types of both."""
    statuses: list[str] = []
    properties: dict[str, Any] = {}
    for answer in (model, *also):
        published = answer.model_json_schema(mode="serialization", by_alias=True)
        success = compact(published, arguments=False)
        statuses += [s for s in _statuses(success) if s not in statuses]
        for name, spec in success.get("properties", {}).items():
            properties[name] = _either(properties.get(name), _shallow(spec))
    statuses += ["rejected", *(["proposed"] if holds else [])]
    if gated:
        properties["disabled"] = {"type": "boolean"}
    properties["status"] = {"type": "string", "enum": statuses}
    return {"type": "object", "properties": properties}


def _either(first: dict[str, Any] | None, second: dict[str, Any]) -> dict[str, Any]:
    """A field two answers share, by the types of both (any type where one says none)."""
    if first is None or first == second:
        return second
    kinds = [first.get("type"), second.get("type")]
    named = {k for kind in kinds for k in ([kind] if isinstance(kind, str) else kind or [])}
    return {"type": sorted(named)} if None not in kinds else {}


def _shallow(spec: dict[str, Any]) -> dict[str, Any]:
    """A property by its type(s) alone."""
    if "type" in spec:
        return {"type": spec["type"]}
    types = sorted({t for s in spec.get("anyOf", []) if isinstance(t := s.get("type"), str)})
    return {"type": types} if types else {}


def _statuses(schema: dict[str, Any]) -> list[str]:
    status = schema.get("properties", {}).get("status", {})
    if "const" in status:
        return [status["const"]]
    return [v for v in status.get("enum", []) if v != "rejected"]


def compact(schema: dict[str, Any], *, arguments: bool = True) -> dict[str, Any]:
    """A JSON Schema as an agent reads it: ``$ref``s inlined, ``title``s and the model's
    docstring dropped; of ``arguments``, an optional field published as its type alone —
    ``anyOf`` of it and ``null`` with ``default: null`` says only "may be left out", which
    leaving it out of ``required`` already says (the model still accepts ``null``; a
    result's ``null`` is a value it sends, and stays)."""
    definitions = {  # a model's docstring is for its readers here; the field describes it
        name: {k: v for k, v in target.items() if k != "description"}
        for name, target in schema.get("$defs", {}).items()
    }

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                target = definitions[node["$ref"].rsplit("/", 1)[-1]]
                return walk({**target, **{k: v for k, v in node.items() if k != "$ref"}})
            node = _plain(_without_null(node) if arguments else node)
            return {
                k: named(v) if k == "properties" else walk(v)
                for k, v in node.items()
                if k not in ("title", "$defs")
            }
        if isinstance(node, list):
            return [walk(item) for item in node]
        return node

    def named(fields: Any) -> Any:
        """An object's fields: their names are the schema's (a property called ``title``
        too), never JSON Schema's own keywords."""
        if not isinstance(fields, dict):
            return walk(fields)
        return {name: walk(field) for name, field in fields.items()}

    result: dict[str, Any] = walk({k: v for k, v in schema.items() if k != "description"})
    return result


def _plain(node: dict[str, Any]) -> dict[str, Any]:
    """What an agent need not read, dropped: a string's lengths (the gate's limits refuse
    an empty or an overlong one by its code, naming the limit), JSON Schema's default
    ``additionalProperties: true``; an ``anyOf`` of bare types as one ``type`` list."""
    options = node.get("anyOf")
    if isinstance(options, list) and all(set(o) == {"type"} for o in options):
        kinds = [o["type"] for o in options]
        if "number" in kinds and "integer" in kinds:  # an integer is a JSON number
            kinds.remove("integer")
        node = {"type": kinds, **_less(node, "anyOf")}
    if node.get("type") == "string":  # the gate's length limits refuse by code, in words
        node = _less(node, "minLength", "maxLength")
    if node.get("additionalProperties") is True:
        node = _less(node, "additionalProperties")
    return node


def _less(node: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in node.items() if k not in keys}


def _without_null(node: dict[str, Any]) -> dict[str, Any]:
    """``{anyOf: [X, {type: null}], default: null, ...}`` as ``{...X, ...}``."""
    options = node.get("anyOf")
    if not isinstance(options, list) or node.get("default", ...) is not None:
        return node
    kept = [o for o in options if o != {"type": "null"}]
    if len(kept) != 1 or len(kept) == len(options):
        return node
    rest = {k: v for k, v in node.items() if k not in ("anyOf", "default")}
    return {**kept[0], **rest}


def families(specs: Sequence[ToolSpec], choice: str) -> list[ToolSpec]:
    """The tools ``serve --tools generic|labels|all`` exposes (reads and audit: always)."""
    return [s for s in specs if choice == "all" or s.family in ("always", choice)]
