"""The schema document operators write (YAML or JSON) and its validation.

A document is checked whole when it is loaded or published, so a bad schema never reaches
the gate: every name is a safe identifier, every remap points to one canonical label without
chains or cycles, the fallback label exists, enum values fit their type. Each problem names
its place in the document (and, read from a file, its line: see ``gate.schema.loading``).

Publishing (``strict``) asks more of a document than reading one back from the log
does: required properties must be declared, relationship properties must point at an
edge the schema allows, and remaps must not collide once case is ignored. A document
published before those rules keeps loading; a new one is held to them.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Sequence
from datetime import timedelta
from typing import Annotated, Any, ClassVar, Literal, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails

from writegate.eventlog import canonical_json
from writegate.gate.limits import Limits
from writegate.gate.resolution.normalize import fold
from writegate.gate.schema.authority import AuthorityDoc
from writegate.gate.schema.rules import (
    Positions,
    Problem,
    authoring_problems,
    consistency_problems,
    value_has_type,
)
from writegate.language import IDENTIFIER

PropertyType = Literal["string", "integer", "number", "boolean", "array"]
ItemType = Literal["string", "integer", "number", "boolean"]
Policy = Literal["remap", "reject"]
# what a write that would change a fact already held does (see ``gate.conflicts``)
ConflictPolicy = Literal["supersede", "keep_higher_confidence", "reject", "review"]
_NAMED = f"^{IDENTIFIER.pattern}$"  # a property's name


def _unset(value: object) -> bool:
    """Fields added after the first format stay out of a document's dump while unset, so a
    document that does not use them keeps the version (the digest) it always had."""
    return value is None or value is False


def _searched(value: object) -> bool:
    """``searchable`` is left out of a document's dump at its default, like ``_unset``."""
    return value is True


class SchemaDocumentError(ValueError):
    """The document is unreadable or invalid; the message says where, one problem after
    another (``problems`` holds them, each with its place; ``lines`` says each in a line)."""

    def __init__(
        self, message: str, problems: Sequence[Problem] = (), lines: Sequence[str] = ()
    ) -> None:
        super().__init__(message)
        self.problems = list(problems)
        self.lines = list(lines) or [message]

    @classmethod
    def of(
        cls, origin: str, problems: Sequence[Problem], positions: Positions | None = None
    ) -> SchemaDocumentError:
        lines = [p.render(origin, positions) for p in problems]
        return cls("; ".join(lines), problems, lines)


class _Problems(ValueError):
    """Carries the model validator's problems out through pydantic (in the error's context)."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("; ".join(p.message for p in problems))
        self.problems = problems


class RelationshipRef(BaseModel):
    """A property whose value names another node and so also creates an edge (seed 001 §3.4)."""

    model_config = ConfigDict(extra="forbid")

    type: str
    to: str
    key: str = "name"
    description: str = ""


class PropertyDoc(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: PropertyType | None = None  # None: any scalar or list of scalars
    items: ItemType | None = None
    enum: list[str | int | float | bool] | None = None
    description: str = ""
    relationship: RelationshipRef | None = None
    conflict: ConflictPolicy | None = Field(default=None, exclude_if=_unset)  # over the owner's
    many: bool = Field(default=False, exclude_if=_unset)  # multi-valued: never a conflict
    # sealed with the subject of the node holding it (``eventlog.sealing``): forgettable
    personal: bool = Field(default=False, exclude_if=_unset)
    # a personal property's superseded values are forgotten this long after they were
    # superseded (``writegate retain``; ISO 8601 duration, e.g. P90D)
    retention: timedelta | None = Field(default=None, exclude_if=_unset)
    # false: its values stay out of the text index (``search_nodes``, ``graph_query``,
    # embeddings): a note or a secret the graph keeps but a search should not meet
    searchable: bool = Field(default=True, exclude_if=_searched)


class EvidenceDoc(BaseModel):
    """One field a candidate is compared on beyond its name (``gate.resolution.evidence``):
    how its values are compared, and whether their disagreement vetoes ``auto``."""

    model_config = ConfigDict(extra="forbid")

    compare: Literal["exact", "date", "similar", "numeric", "geo"]
    tolerance_days: int = Field(default=0, ge=0)  # ``date``: days apart that still agree
    tolerance: float = Field(default=0.0, ge=0)  # ``numeric``: distance that still agrees
    veto: bool = True  # a disagreement (not a near miss) never auto-resolves
    # ``geo``: metres apart that still agree; the place is the field's own [lat, lng] (or
    # "lat,lng"), or the two properties named here: one location, weighed once
    tolerance_metres: float | None = Field(default=None, gt=0, exclude_if=_unset)  # 100
    latitude: str | None = Field(default=None, pattern=_NAMED, exclude_if=_unset)
    longitude: str | None = Field(default=None, pattern=_NAMED, exclude_if=_unset)

    @model_validator(mode="after")
    def _coordinates(self) -> Self:
        if (self.latitude is None) != (self.longitude is None):
            raise ValueError("name both latitude and longitude, or neither")
        if self.compare != "geo" and (self.latitude or self.tolerance_metres):
            raise ValueError("latitude, longitude and tolerance_metres are for compare: geo")
        return self

    def properties_of(self, field: str) -> tuple[str, ...]:
        """The properties this field is read from: its own, or its two coordinates."""
        if self.latitude is not None and self.longitude is not None:
            return (self.latitude, self.longitude)
        return (field,)


class ResolutionDoc(BaseModel):
    """How a write that would create a node looks for the node it may duplicate
    (``gate.resolution.matching``)."""

    model_config = ConfigDict(extra="forbid")

    policy: Literal["off", "propose", "auto"] = "propose"
    name: str | None = None  # the property holding the name (default: the one merge key)
    kind: Literal["person", "organisation"] = "person"
    identity: list[str] = Field(default_factory=list)  # properties that also identify a node
    auto_threshold: float = Field(default=0.98, ge=0, le=1)
    propose_threshold: float = Field(default=0.70, ge=0, le=1)
    # words dropped from the end of a name beyond the kind's own ("holding", "gruppe")
    stop_suffixes: list[str] | None = Field(default=None, exclude_if=_unset)
    # fields weighed beside the name, by property (unset: the name and identity alone)
    evidence: dict[str, EvidenceDoc] | None = Field(default=None, exclude_if=_unset)

    @field_validator("stop_suffixes")
    @classmethod
    def _one_word_each(cls, value: list[str] | None) -> list[str] | None:
        for suffix in value or ():
            if len(fold(suffix).split()) != 1:
                raise ValueError(f"stop suffix {suffix!r} must be one word")
        return value


class ReviewRule(BaseModel):
    """Writes held for a reviewer by who sent them and how (``gate.review``): those of the
    listed extraction methods (any, if none) to the listed labels and relationship types (any,
    if none), from an agent with fewer than ``until_approved`` approved writes, or always, at 0."""

    model_config = ConfigDict(extra="forbid")

    extraction_methods: list[str] = Field(default_factory=list)
    labels: list[str] = Field(default_factory=list)
    until_approved: int = Field(default=0, ge=0)


class NodeTypeDoc(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: str = ""
    merge_keys: list[str] = Field(default_factory=list)
    required: list[str] = Field(default_factory=list)
    remaps_from: list[str] = Field(default_factory=list)
    properties: dict[str, PropertyDoc] = Field(default_factory=dict)
    additional_properties: bool = True
    conflict: ConflictPolicy | None = Field(default=None, exclude_if=_unset)
    # writes whose computed confidence is below this are held for a reviewer
    review_below: float | None = Field(default=None, ge=0, le=1, exclude_if=_unset)
    resolution: ResolutionDoc | None = Field(default=None, exclude_if=_unset)
    # the scope its nodes belong to (``language.scopes``; unset: the implicit one), or
    # with ``scopes`` the one a write that names none puts a new node in
    scope: str | None = Field(default=None, pattern=f"^{IDENTIFIER.pattern}$", exclude_if=_unset)
    # the scopes a write may choose among (``scope``, else the first, is the default)
    scopes: list[Annotated[str, Field(pattern=f"^{IDENTIFIER.pattern}$")]] | None = Field(
        default=None, min_length=1, exclude_if=_unset
    )
    # its nodes are subjects: merge keys sealed, identity a pseudonym (``gate.personal``)
    personal: bool = Field(default=False, exclude_if=_unset)
    self_review: bool = Field(default=False, exclude_if=_unset)  # may writers decide their own

    @model_validator(mode="after")
    def _evidence_declared(self) -> Self:
        fields = (self.resolution.evidence or {}) if self.resolution else {}
        for field, doc in fields.items() if not self.additional_properties else ():
            for prop in doc.properties_of(field):
                if prop not in self.properties and prop not in self.merge_keys:
                    reads = f" reads {prop!r}, which" if prop != field else ""
                    raise ValueError(
                        f"resolution evidence field {field!r}{reads} is not a property of this "
                        "label (declare it, or allow additional properties)"
                    )
        return self

    @model_validator(mode="after")
    def _scope_among_scopes(self) -> Self:
        if self.scope is not None and self.scopes is not None and self.scope not in self.scopes:
            raise ValueError(f"scope {self.scope!r} must be one of scopes {self.scopes}")
        return self


class RelationshipTypeDoc(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    description: str = ""
    from_labels: list[str] = Field(default_factory=list, alias="from")  # empty: any label
    to_labels: list[str] = Field(default_factory=list, alias="to")
    remaps_from: list[str] = Field(default_factory=list)
    required: list[str] = Field(default_factory=list)
    properties: dict[str, PropertyDoc] = Field(default_factory=dict)
    additional_properties: bool = True
    # one such relationship per start node at a time: a second one is a conflict
    functional: bool = Field(default=False, exclude_if=_unset)
    conflict: ConflictPolicy | None = Field(default=None, exclude_if=_unset)
    review_below: float | None = Field(default=None, ge=0, le=1, exclude_if=_unset)
    self_review: bool = Field(default=False, exclude_if=_unset)


class SchemaDocument(BaseModel):
    model_config = ConfigDict(extra="forbid")
    # fields added later: out of the version digest while unset (a version stays as it was)
    _LATER_FIELDS: ClassVar[tuple[str, ...]] = ("limits",)

    name: str = "schema"
    description: str = ""
    unknown_label_policy: Policy = "remap"
    fallback_label: str | None = None
    # ':person' finds ':Person' without listing every casing in remaps_from
    case_insensitive_remap: bool = True
    nodes: dict[str, NodeTypeDoc]
    relationships: dict[str, RelationshipTypeDoc] = Field(default_factory=dict)
    limits: Limits | None = None  # how large a write may be (see ``gate.limits``)
    # the default conflict policy (unset: supersede)
    conflict: ConflictPolicy | None = Field(default=None, exclude_if=_unset)
    # writes held for review by who sent them and how (a confidence floor is per label)
    review_rules: list[ReviewRule] | None = Field(default=None, exclude_if=_unset)
    # labels of one kind of thing (Person, user_profile): resolution and merges look across
    identity_groups: dict[str, list[str]] | None = Field(default=None, exclude_if=_unset)
    # read-time decay: a confidence halves every half-life of its extraction method
    # (ISO 8601 durations, e.g. llm: P30D); never written into the log
    half_lives: dict[str, timedelta] | None = Field(default=None, exclude_if=_unset)
    # observations' text is personal: each observation a subject of its own, sealed, with a
    # random id (not its content's digest), forgotten alone or with any node whose write cites it
    personal_observations: bool = Field(default=False, exclude_if=_unset)
    # personal observations' text is forgotten this long after it was recorded (``retain``)
    observation_retention: timedelta | None = Field(default=None, exclude_if=_unset)
    # how far methods and sources are trusted (``gate.schema.authority``; unset: no ranks)
    authority: AuthorityDoc | None = Field(default=None, exclude_if=_unset)

    @field_validator("half_lives")
    @classmethod
    def _positive(cls, lives: dict[str, timedelta] | None) -> dict[str, timedelta] | None:
        for method, life in (lives or {}).items():
            if life <= timedelta(0):
                raise ValueError(f"the half-life of {method!r} must be positive, not {life}")
        return lives

    @model_validator(mode="after")
    def _consistent(self, info: ValidationInfo) -> Self:
        problems = consistency_problems(self)
        if (info.context or {}).get("strict", False):
            problems += [p for p in authoring_problems(self) if not _echo(p, problems)]
        if problems:
            raise _Problems(problems)
        return self

    def version(self) -> str:
        """Content digest: the same document has the same version from any source."""
        body = self.model_dump(mode="json", by_alias=True)
        for name in self._LATER_FIELDS:
            if body.get(name) is None:
                body.pop(name, None)
        digest = hashlib.sha256(canonical_json(body))
        return "sha256:" + digest.hexdigest()[:16]


def _echo(problem: Problem, found: list[Problem]) -> bool:
    """Whether a publishing rule trips on a mistake the consistency rules already named:
    the same place, or remaps (their case rules assume the remaps themselves sound)."""
    return any(
        p.path == problem.path or ("remaps_from" in p.path and "remaps_from" in problem.path)
        for p in found
    )


def parse_document(
    data: Any, origin: str = "schema", *, strict: bool = True, positions: Positions | None = None
) -> SchemaDocument:
    """Validate a document's data. ``strict`` holds it to the publishing rules (see the
    module's docstring): off only to read back what was published under older rules, or
    what a store that predates them holds."""
    try:
        return SchemaDocument.model_validate(data, context={"strict": strict})
    except ValidationError as exc:
        errors = exc.errors()
        problems = [p for e in errors for p in _rules_in(e) or [_pydantic_problem(e)]]
        if not any(_rules_in(e) for e in errors):  # the rest of the document too
            problems += _rule_problems(data, errors, strict)
        raise SchemaDocumentError.of(origin, problems, positions) from exc


def _rules_in(error: ErrorDetails) -> list[Problem]:
    """The problems the document's own rules found (``_Problems``), if this error is theirs."""
    found = (error.get("ctx") or {}).get("error")
    return found.problems if isinstance(found, _Problems) else []


def _rule_problems(data: Any, errors: list[ErrorDetails], strict: bool) -> list[Problem]:
    """The rules' problems in what is left of ``data`` once every value pydantic refused is
    taken out: a key it does not know does not hide an undeclared required property."""
    pruned = copy.deepcopy(data)
    for error in errors:
        _remove(pruned, error["loc"][:-1] if error["type"] == "missing" else error["loc"])
    try:
        SchemaDocument.model_validate(_without_gone(pruned), context={"strict": strict})
    except ValidationError as again:
        return [problem for e in again.errors() for problem in _rules_in(e)]
    return []


_GONE = object()  # a list item taken out (removed at the end, so indexes hold meanwhile)


def _remove(data: Any, loc: tuple[str | int, ...]) -> None:
    """Take the value at ``loc`` out of ``data`` (nothing, if it is not there)."""
    parent, last = data, loc[-1] if loc else None
    for part in loc[:-1]:
        if not _holds(parent, part):
            return  # a union's tag, or a value already taken out
        parent = parent[part]
    if isinstance(parent, dict):
        parent.pop(last, None)
    elif last is not None and _holds(parent, last):
        parent[last] = _GONE


def _holds(parent: Any, part: str | int) -> bool:
    if isinstance(parent, dict):
        return part in parent
    return isinstance(parent, list) and isinstance(part, int) and part < len(parent)


def _without_gone(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _without_gone(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_without_gone(v) for v in data if v is not _GONE]
    return data


def _pydantic_problem(error: ErrorDetails) -> Problem:
    loc = error["loc"]
    if error["type"] == "extra_forbidden":
        return Problem(loc, f"unknown key {loc[-1]!r}")
    return Problem(loc, error["msg"])


__all__ = [  # value_has_type lived here first
    "PropertyDoc",
    "RelationshipRef",
    "ReviewRule",
    "SchemaDocument",
    "SchemaDocumentError",
    "parse_document",
    "value_has_type",
]
