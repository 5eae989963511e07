"""Typed requests and results of the gate operations (seed 000 shapes, plus ``seq``/``event_id``).

Requests are validated strictly: wrong shapes become ``INVALID_ARGUMENT`` before
any schema logic runs. Results are the seed's shapes; a rejection is a value,
not an exception, so every transport returns it the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
)

from writegate.gate.errors import ErrorCode, GateRejection

Scalar = StrictStr | StrictBool | StrictInt | StrictFloat
Keys = dict[str, Scalar]
Reliability = Annotated[StrictFloat, Field(allow_inf_nan=False)]  # ints are accepted, bools not
EndpointPolicy = Literal["fail_if_missing", "merge_endpoints"]

_REQUEST = ConfigDict(extra="forbid", frozen=True)
_RESULT = ConfigDict(extra="forbid", frozen=True, defer_build=True)  # built when first used
M = TypeVar("M", bound=BaseModel)


class Provenanced(BaseModel):
    """Fields every write declares; the gate turns them into computed provenance."""

    model_config = _REQUEST

    source: StrictStr = Field(min_length=1, max_length=2000)
    extraction_method: StrictStr = Field(min_length=1, max_length=100)
    reliability: Reliability = 0.5
    if_version: StrictInt | None = Field(default=None, ge=0)


class WriteNodeRequest(Provenanced):
    label: StrictStr = Field(min_length=1, max_length=200)
    merge_keys: Keys
    properties: dict[str, Any] = Field(default_factory=dict)
    # reject (NODE_ALREADY_EXISTS) instead of merging into an existing node; a stub (an
    # endpoint a relationship created) is filled in, since nobody wrote it as a node
    create_only: StrictBool = False


class WriteRelationshipRequest(Provenanced):
    type: StrictStr = Field(min_length=1, max_length=200)
    from_label: StrictStr = Field(min_length=1, max_length=200)
    from_keys: Keys
    to_label: StrictStr = Field(min_length=1, max_length=200)
    to_keys: Keys
    properties: dict[str, Any] = Field(default_factory=dict)
    endpoint_policy: EndpointPolicy = "fail_if_missing"


class DeleteNodeRequest(Provenanced):
    label: StrictStr = Field(min_length=1, max_length=200)
    merge_keys: Keys
    detach: StrictBool = False


class DeleteRelationshipRequest(Provenanced):
    type: StrictStr = Field(min_length=1, max_length=200)
    from_label: StrictStr = Field(min_length=1, max_length=200)
    from_keys: Keys
    to_label: StrictStr = Field(min_length=1, max_length=200)
    to_keys: Keys


BATCH_OPERATIONS = ("write_node", "write_relationship", "delete_node", "delete_relationship")
MAX_BATCH = 10_000


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


class WriteNodeResult(BaseModel):
    model_config = _RESULT

    status: Literal["written"] = "written"
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


class _RelationshipResult(BaseModel):
    """Names the relationship a result is about; ``from``/``to`` as the seed spells them."""

    model_config = _RESULT

    type: str
    from_node: NodeRef = Field(serialization_alias="from")
    to_node: NodeRef = Field(serialization_alias="to")


class WriteRelationshipResult(_RelationshipResult):
    status: Literal["written"] = "written"
    confidence: float
    write_gate_version: str
    remapped_from: str | None
    stubs_created: list[NodeRef]
    created: bool
    version: int
    schema_version: str
    seq: int
    event_id: str


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


ItemResult = WriteNodeResult | WriteRelationshipResult | DeleteNodeResult | DeleteRelationshipResult


class BatchResult(BaseModel):
    model_config = _RESULT

    status: Literal["written"] = "written"
    results: list[ItemResult]
    first_seq: int
    last_seq: int


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


def parse_request(model: type[M], arguments: Mapping[str, Any]) -> M:
    """Strict validation; any failure is one ``INVALID_ARGUMENT`` listing the fields."""
    try:
        return model.model_validate(arguments)
    except ValidationError as exc:
        errors = [
            {"field": ".".join(str(p) for p in e["loc"]) or "arguments", "problem": e["msg"]}
            for e in exc.errors(include_url=False)
        ]
        first = errors[0]
        raise GateRejection(
            ErrorCode.INVALID_ARGUMENT,
            f"{first['field']}: {first['problem']}"
            + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""),
            {"errors": errors[:20]},
        ) from exc
