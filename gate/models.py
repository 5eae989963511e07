"""Typed requests and results of the gate operations (seed 000 shapes, plus ``seq``/``event_id``).

Requests are validated strictly: wrong shapes become ``INVALID_ARGUMENT`` before
any schema logic runs. Results are the seed's shapes; a rejection is a value,
not an exception, so every transport returns it the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal, Self, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    WithJsonSchema,
    model_validator,
)

from writegate.eventlog.events import format_timestamp
from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.moments import InCalendar
from writegate.language import Superseded
from writegate.language.observations import CITABLE_ID, OBSERVATION_ID

Scalar = StrictStr | StrictBool | StrictInt | StrictFloat


def _held(keys: dict[str, Scalar]) -> dict[str, Scalar]:
    """Keys whose integers the log can hold (64 bits): every node's identity is their JSON."""
    for name, value in keys.items():
        if isinstance(value, int) and not -(2**63) <= value < 2**63:
            raise ValueError(f"merge key {name} is past a 64-bit integer")
    return keys


# published as an object alone: its example shows the scalars, and the gate names a key
# whose value is not one (the union, spelled on every node reference, cost more than it told)
Keys = Annotated[dict[str, Scalar], AfterValidator(_held), WithJsonSchema({"type": "object"})]
Reliability = Annotated[StrictFloat, Field(allow_inf_nan=False)]  # ints are accepted, bools not
EndpointPolicy = Literal["fail_if_missing", "merge_endpoints"]

_REQUEST = ConfigDict(extra="forbid", frozen=True)
_RESULT = ConfigDict(extra="forbid", frozen=True, defer_build=True)  # built when first used


def _empty(value: object) -> bool:
    """A result leaves out what did not happen (``superseded``: nothing was replaced)."""
    return not value


M = TypeVar("M", bound=BaseModel)


def _text(description: str, longest: int = 200) -> Any:
    return Field(min_length=1, max_length=longest, description=description)


IDEMPOTENCY = "A retry with this key writes nothing again."
LABEL = "The node's label (synonyms are remapped)."
KEYS = 'Its merge keys, e.g. {"name": "Ada"}.'
RTYPE = "The relationship type (synonyms are remapped)."


class Declared(BaseModel):
    """Where a write's content came from, as the writer declares it; the gate turns it
    into computed provenance."""

    model_config = _REQUEST

    source: StrictStr = _text("Where it came from (a URL, file, tool).", 2000)
    extraction_method: StrictStr = _text("How it was obtained.", 100)
    reliability: Reliability = Field(
        default=0.5,
        description="How reliable the source is.",
        json_schema_extra={"minimum": 0, "maximum": 1},
    )


class Provenanced(Declared):
    """Fields every graph write declares: provenance, and the version it expects."""

    if_version: StrictInt | None = Field(
        default=None,
        ge=0,
        description="Only at this version (0: if new).",
    )


class ValidTime(BaseModel):
    """When the written fact is true in the world (valid time), as distinct from when the
    log learned it (record time, which the gate stamps)."""

    model_config = _REQUEST

    valid_from: InCalendar | None = Field(
        default=None,
        description="When it became true (default: when written).",
    )
    valid_to: InCalendar | None = Field(
        default=None,
        description="When it stopped being true (default: never).",
    )

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        if self.valid_from and self.valid_to and self.valid_to <= self.valid_from:
            raise ValueError("valid_to must be later than valid_from")
        return self

    def stated(self) -> dict[str, str]:
        """The valid time as the event stores it (nothing stated: nothing)."""
        times = {"valid_from": self.valid_from, "valid_to": self.valid_to}
        return {name: format_timestamp(moment) for name, moment in times.items() if moment}


MAX_CITED = 32  # observations one write may cite


def _citable(cited: str) -> str:
    if CITABLE_ID.fullmatch(cited) is None:
        raise ValueError("an observation id is obs_ and 32 hex digits, a passage's then #START")
    return cited


# an observation, or a passage of a document (``<id>#<start>``, as its search answered it):
# the schema says how one begins (tools/list stays small), the validator the whole of it
ObservationId = Annotated[
    StrictStr, Field(pattern=f"^{OBSERVATION_ID.pattern}"), AfterValidator(_citable)
]


Cited = list[ObservationId] | None


def cites() -> Any:
    """The observations a fact was extracted from (``record_observation`` gave their ids):
    each must exist when the write is checked, and the fact's provenance names them."""
    return Field(
        default=None,
        max_length=MAX_CITED,
        description="The observations it was extracted from.",
    )


class WriteNodeRequest(Provenanced, ValidTime):
    label: StrictStr = _text(LABEL)
    merge_keys: Keys = Field(description=KEYS)
    properties: dict[str, Any] = Field(
        default_factory=dict,
        description="Properties to set; null removes one.",
    )
    create_only: StrictBool = Field(
        default=False,
        description="Refuse (NODE_ALREADY_EXISTS) if it exists.",
    )
    resolution: Literal["new", "same"] | None = Field(
        default=None,
        description="new: none of POSSIBLE_DUPLICATE's; same: IDENTITY_CONFLICT's node.",
    )
    observations: Cited = cites()
    scope: StrictStr | None = Field(
        default=None,
        min_length=1,
        max_length=64,
        description="Its scope (default: where it is, else its label's).",
    )


class WriteRelationshipRequest(Provenanced, ValidTime):
    type: StrictStr = _text(RTYPE)
    from_label: StrictStr = _text("The start node's label.")
    from_keys: Keys = Field(description="The start node's merge keys.")
    to_label: StrictStr = _text("The end node's label.")
    to_keys: Keys = Field(description="The end node's merge keys.")
    properties: dict[str, Any] = Field(
        default_factory=dict, description="Properties to set; null removes one."
    )
    endpoint_policy: EndpointPolicy = Field(
        default="fail_if_missing",
        description="merge_endpoints: make missing ends as stubs.",
    )
    observations: Cited = cites()


class DeleteNodeRequest(Provenanced):
    label: StrictStr = _text(LABEL)
    merge_keys: Keys = Field(description=KEYS)
    detach: StrictBool = Field(default=False, description="Also delete its relationships.")


class DeleteRelationshipRequest(Provenanced):
    type: StrictStr = _text(RTYPE)
    from_label: StrictStr = _text("The start node's label.")
    from_keys: Keys = Field(description="The start node's merge keys.")
    to_label: StrictStr = _text("The end node's label.")
    to_keys: Keys = Field(description="The end node's merge keys.")


BATCH_OPERATIONS = ("write_node", "write_relationship", "delete_node", "delete_relationship")


# -- results -------------------------------------------------------------------------


class Rejected(BaseModel):
    model_config = _RESULT

    status: Literal["rejected"] = "rejected"
    error_code: str
    message: str
    details: dict[str, Any] = Field(default_factory=dict)


class NodeRef(BaseModel):
    model_config = _RESULT

    label: str
    merge_keys: dict[str, Any]


# written: a new version; unchanged: the fact as held, said again by a support it had
# (nothing appended); corroborated: said again by a new agent, source or method (one
# corroboration event, no new version: ``gate.corroboration``)
WriteStatus = Literal["written", "unchanged", "corroborated"]


class WriteNodeResult(BaseModel):
    model_config = _RESULT

    status: WriteStatus = "written"
    label: str  # canonical (may differ if remapped)
    merge_keys: dict[str, Any]
    confidence: float
    write_gate_version: str
    remapped_from: str | None  # set iff a schema remap occurred
    created: bool
    version: int
    schema_version: str
    seq: int
    event_id: str
    superseded: list[Superseded] = Field(default_factory=list, exclude_if=_empty)
    # the identity the write named, when it landed on another node (entity resolution, or
    # a duplicate merged into this one)
    resolved_from: str | None = Field(default=None, exclude_if=_empty)
    # properties the schema does not declare, accepted as the label allows (left out: none)
    unknown_properties: list[str] = Field(default_factory=list, exclude_if=_empty)
    # a corroboration's: the fact's confidence with its support now (left out: none)
    corroborated_confidence: float | None = Field(default=None, exclude_if=_empty)


class _RelationshipResult(BaseModel):
    """Names the relationship a result is about; ``from``/``to`` as the seed spells them."""

    model_config = _RESULT

    type: str
    from_node: NodeRef = Field(serialization_alias="from")
    to_node: NodeRef = Field(serialization_alias="to")


class WriteRelationshipResult(_RelationshipResult):
    status: WriteStatus = "written"
    confidence: float
    write_gate_version: str
    remapped_from: str | None
    stubs_created: list[NodeRef]
    created: bool
    version: int
    schema_version: str
    seq: int
    event_id: str
    superseded: list[Superseded] = Field(default_factory=list, exclude_if=_empty)
    # an end ("from"/"to") that landed on another node than named (entity resolution, or a
    # duplicate merged into it): the identity named
    resolved_from: dict[str, str] | None = Field(default=None, exclude_if=_empty)
    # properties the schema does not declare, accepted as the type allows (left out: none)
    unknown_properties: list[str] = Field(default_factory=list, exclude_if=_empty)
    corroborated_confidence: float | None = Field(default=None, exclude_if=_empty)


class DeleteNodeResult(BaseModel):
    model_config = _RESULT

    status: Literal["deleted"] = "deleted"
    label: str
    merge_keys: dict[str, Any]
    relationships_deleted: int
    version: int
    write_gate_version: str
    seq: int
    event_id: str


class DeleteRelationshipResult(_RelationshipResult):
    status: Literal["deleted"] = "deleted"
    version: int
    write_gate_version: str
    seq: int
    event_id: str


class ProposedResult(BaseModel):
    """A write held for review (``gate.review``): appended as a proposal, it changes the
    graph only once a reviewer approves it."""

    model_config = _RESULT

    status: Literal["proposed"] = "proposed"
    proposal: str
    reason: str
    confidence: float
    write_gate_version: str
    seq: int
    event_id: str


ItemResult = (
    WriteNodeResult
    | WriteRelationshipResult
    | DeleteNodeResult
    | DeleteRelationshipResult
    | ProposedResult
)


# what every item of a batch did, or "mixed" when they did different things
BatchStatus = Literal["written", "unchanged", "corroborated", "deleted", "proposed", "mixed"]


class BatchResult(BaseModel):
    """A batch's answer: its status is what happened to its items (``proposed`` when each
    was held for review, ``mixed`` when they differ), ``outcomes`` counts them by status."""

    model_config = _RESULT

    status: BatchStatus
    outcomes: dict[str, int]
    results: list[ItemResult]
    first_seq: int
    last_seq: int
    # items entity resolution landed on nodes the graph held (seed 004's mergedCount)
    resolved: int = 0


class RefreshResult(BaseModel):
    model_config = _RESULT

    status: Literal["refreshed"] = "refreshed"
    loaded: int  # canonical labels loaded (seed 000)
    relationship_types: int
    schema_version: str
    source: str


class PublishResult(BaseModel):
    model_config = _RESULT

    status: Literal["published", "unchanged"]
    schema_version: str
    labels: int
    relationship_types: int
    seq: int | None


def dump(result: BaseModel) -> dict[str, Any]:
    """The JSON shape of a result, with ``from``/``to`` spelled as in the seed."""
    return result.model_dump(mode="json", by_alias=True)


CodeOf = Callable[[Mapping[str, Any]], ErrorCode]  # a pydantic error -> the gate's code


def parse_request(model: type[M], arguments: Mapping[str, Any], code_of: CodeOf | None = None) -> M:
    """Strict validation; any failure is one rejection listing the fields, whose code is
    ``INVALID_ARGUMENT`` unless ``code_of`` names a more precise one for the first error."""
    try:
        return model.model_validate(arguments)
    except ValidationError as exc:
        raw = exc.errors(include_url=False)
        errors = [
            {"field": ".".join(str(p) for p in e["loc"]) or "arguments", "problem": e["msg"]}
            for e in raw
        ]
        first = errors[0]
        raise GateRejection(
            code_of(raw[0]) if code_of is not None else ErrorCode.INVALID_ARGUMENT,
            f"{first['field']}: {first['problem']}"
            + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""),
            {"errors": errors[:20]},
        ) from exc
