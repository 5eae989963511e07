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

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from types import UnionType
from typing import Any, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

from pydantic import BaseModel, Field, create_model

from writegate.eventlog import Actor
from writegate.gate.api import Gate
from writegate.gate.errors import GateRejection
from writegate.gate.jobs import Jobs
from writegate.gate.models import CodeOf, ProposedResult, Rejected, parse_request
from writegate.gate.reads.reader import GraphReader
from writegate.gate.writing import WriteGuard

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
        return output_schema(self.result, holds=self.holds, gated=self.gated)

    def with_methods(self, methods: tuple[str, ...]) -> ToolSpec:
        """The spec publishing the extraction methods the gate's formula accepts."""
        if "extraction_method" not in self.arguments.model_fields:
            return self
        return replace(self, arguments=with_methods(self.arguments, methods))


def tool(
    group: str,
    *,
    read_only: bool = False,
    destructive: bool = False,
    family: Family = "always",
    gated: bool = False,
) -> Callable[[Callable[[ToolCall, A], BaseModel]], ToolSpec]:
    """Define a tool by its function: the second parameter's annotation is the argument
    model, the return annotation (less ``Rejected``) the result model."""

    def define(function: Callable[[ToolCall, A], BaseModel]) -> ToolSpec:
        hints = get_type_hints(function)
        parameters = list(inspect.signature(function).parameters)
        result = _success(hints["return"])
        returned = hints["return"]
        return ToolSpec(
            name=function.__name__,
            group=group,
            description=inspect.cleandoc(function.__doc__ or "").replace("\n", " "),
            arguments=hints[parameters[1]],
            result=result,
            run=function,
            read_only=read_only,
            destructive=destructive,
            family=family,
            holds=ProposedResult in get_args(returned),
            gated=gated,
        )

    return define


def _success(annotation: Any) -> type[BaseModel]:
    members = get_args(annotation) if get_origin(annotation) in (Union, UnionType) else [annotation]
    found = [m for m in members if isinstance(m, type) and m not in (Rejected, ProposedResult)]
    if len(found) != 1 or not issubclass(found[0], BaseModel):
        raise TypeError(f"a tool returns one model (or it or Rejected), not {annotation!r}")
    return found[0]


# -- the published schemas -----------------------------------------------------------------

METHODS_NOTE = "How the claim was obtained; it sets the confidence."


@cache
def with_methods(model: type[BaseModel], methods: tuple[str, ...]) -> type[BaseModel]:
    """``model`` publishing ``extraction_method``'s allowed values (the gate still checks
    them itself, so an unknown method is seed 000's ``INVALID_EXTRACTION_METHOD``)."""
    field = model.model_fields["extraction_method"]
    annotation: Any = field.annotation
    return create_model(
        model.__name__,
        __base__=model,
        extraction_method=(
            annotation,
            Field(
                default=field.default,  # required where the model requires it
                min_length=1,
                max_length=100,
                description=field.description or METHODS_NOTE,
                json_schema_extra={"enum": list(methods)},
            ),
        ),
    )


@cache
def input_schema(model: type[BaseModel]) -> dict[str, Any]:
    return compact(model.model_json_schema(by_alias=True))


@cache
def output_schema(
    model: type[BaseModel], *, holds: bool = False, gated: bool = False
) -> dict[str, Any]:
    """The result's top-level fields and the rejection's (and, for a write that may be
    held for review, the proposal's; for a graph tool, ``disabled``) in one object, each
    by its JSON type only, all optional (``status`` says which it is, where the success
    has one): what a client checks on every call should cost little to check and read."""
    success = compact(model.model_json_schema(mode="serialization", by_alias=True))
    rejected = compact(Rejected.model_json_schema(mode="serialization"))
    fields = {**rejected["properties"], **success.get("properties", {})}
    statuses = [*_statuses(success), "rejected"]
    if holds:
        proposed = compact(ProposedResult.model_json_schema(mode="serialization"))
        fields = {**proposed["properties"], **fields}
        statuses.append("proposed")
    properties = {name: _shallow(spec) for name, spec in fields.items()}
    if gated:
        properties["disabled"] = {"type": "boolean"}
    properties["status"] = {"type": "string", "enum": statuses}
    return {"type": "object", "properties": properties}


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


def compact(schema: dict[str, Any]) -> dict[str, Any]:
    """A JSON Schema with its ``$ref``s inlined and ``title``s dropped."""
    definitions = schema.get("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                target = definitions[node["$ref"].rsplit("/", 1)[-1]]
                return walk({**target, **{k: v for k, v in node.items() if k != "$ref"}})
            return {k: walk(v) for k, v in node.items() if k not in ("title", "$defs")}
        if isinstance(node, list):
            return [walk(item) for item in node]
        return node

    result: dict[str, Any] = walk(schema)
    return result


def families(specs: Sequence[ToolSpec], choice: str) -> list[ToolSpec]:
    """The tools ``serve --tools generic|labels|all`` exposes (reads and audit: always)."""
    return [s for s in specs if choice == "all" or s.family in ("always", choice)]
