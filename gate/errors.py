"""Error codes the gate returns, and the exception that carries one to the operation boundary."""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class ErrorCode(StrEnum):
    # seed 000's table
    SCHEMA_UNKNOWN_LABEL = "SCHEMA_UNKNOWN_LABEL"
    SCHEMA_MISSING_REQUIRED_PROPERTY = "SCHEMA_MISSING_REQUIRED_PROPERTY"
    SCHEMA_PROTECTED_FIELD = "SCHEMA_PROTECTED_FIELD"
    SCHEMA_SOURCE_UNAVAILABLE = "SCHEMA_SOURCE_UNAVAILABLE"
    SCHEMA_TYPE_MISMATCH = "SCHEMA_TYPE_MISMATCH"
    ENDPOINT_NOT_FOUND = "ENDPOINT_NOT_FOUND"
    INVALID_EXTRACTION_METHOD = "INVALID_EXTRACTION_METHOD"
    FORMULA_INVALID_OUTPUT = "FORMULA_INVALID_OUTPUT"
    # what a real gate needs beyond the seed
    INVALID_IDENTIFIER = "INVALID_IDENTIFIER"
    INVALID_ARGUMENT = "INVALID_ARGUMENT"
    VERSION_CONFLICT = "VERSION_CONFLICT"
    IDEMPOTENCY_KEY_REUSED = "IDEMPOTENCY_KEY_REUSED"
    SCHEMA_ENUM_VIOLATION = "SCHEMA_ENUM_VIOLATION"
    SCHEMA_UNKNOWN_PROPERTY = "SCHEMA_UNKNOWN_PROPERTY"
    SCHEMA_MERGE_KEY_MISMATCH = "SCHEMA_MERGE_KEY_MISMATCH"
    SCHEMA_ENDPOINT_LABEL_NOT_ALLOWED = "SCHEMA_ENDPOINT_LABEL_NOT_ALLOWED"
    SCHEMA_INVALID = "SCHEMA_INVALID"
    NODE_NOT_FOUND = "NODE_NOT_FOUND"
    RELATIONSHIP_NOT_FOUND = "RELATIONSHIP_NOT_FOUND"
    NODE_HAS_RELATIONSHIPS = "NODE_HAS_RELATIONSHIPS"
    POLICY_DENIED = "POLICY_DENIED"
    LIMIT_EXCEEDED = "LIMIT_EXCEEDED"
    NODE_ALREADY_EXISTS = "NODE_ALREADY_EXISTS"
    SCHEMA_CHANGE_UNSAFE = "SCHEMA_CHANGE_UNSAFE"
    CONFLICT = "CONFLICT"
    CONFLICT_LOWER_CONFIDENCE = "CONFLICT_LOWER_CONFIDENCE"
    AUTHORITY_CONFLICT = "AUTHORITY_CONFLICT"
    PROPOSAL_NOT_PENDING = "PROPOSAL_NOT_PENDING"
    SELF_REVIEW = "SELF_REVIEW"
    LOG_UNAVAILABLE = "LOG_UNAVAILABLE"
    POSSIBLE_DUPLICATE = "POSSIBLE_DUPLICATE"
    IDENTITY_CONFLICT = "IDENTITY_CONFLICT"
    MERGE_NOT_FOUND = "MERGE_NOT_FOUND"
    MERGE_NOT_UNDOABLE = "MERGE_NOT_UNDOABLE"
    JOB_NOT_FOUND = "JOB_NOT_FOUND"
    JOB_TARGET_BUSY = "JOB_TARGET_BUSY"
    OBSERVATION_NOT_FOUND = "OBSERVATION_NOT_FOUND"
    FEEDBACK_ALREADY_GIVEN = "FEEDBACK_ALREADY_GIVEN"
    SOURCE_RETRACTED = "SOURCE_RETRACTED"
    OBSERVATION_RETRACTED = "OBSERVATION_RETRACTED"
    RETRACTION_NOT_FOUND = "RETRACTION_NOT_FOUND"
    EMBEDDER_UNAVAILABLE = "EMBEDDER_UNAVAILABLE"


# One line each: what the code means and what the caller should do. The README's table and
# the MCP tool descriptions are generated from this, so the meaning lives in one place.
ERROR_MEANINGS: dict[ErrorCode, str] = {
    ErrorCode.SCHEMA_UNKNOWN_LABEL: "Label or relationship type not in the schema and no remap target.",
    ErrorCode.SCHEMA_MISSING_REQUIRED_PROPERTY: "A required property is absent from the node after the write; details.missing lists them.",
    ErrorCode.SCHEMA_PROTECTED_FIELD: "The write tried to set a gate-computed field (confidence, source, ...).",
    ErrorCode.SCHEMA_SOURCE_UNAVAILABLE: "The schema could not be loaded; the previous snapshot (if any) keeps serving.",
    ErrorCode.SCHEMA_TYPE_MISMATCH: "A property value does not match its declared type.",
    ErrorCode.ENDPOINT_NOT_FOUND: "write_relationship with fail_if_missing and an endpoint node absent.",
    ErrorCode.INVALID_EXTRACTION_METHOD: "extraction_method is not one the formula provider accepts.",
    ErrorCode.FORMULA_INVALID_OUTPUT: "The formula provider returned something other than a number in [0, 1].",
    ErrorCode.INVALID_IDENTIFIER: "A label, type or property name is not a safe identifier.",
    ErrorCode.INVALID_ARGUMENT: "The arguments are malformed (wrong shape, non-scalar key, NaN, ...).",
    ErrorCode.VERSION_CONFLICT: "if_version did not match; details.current_version holds the current one.",
    ErrorCode.IDEMPOTENCY_KEY_REUSED: "The idempotency key was used before for a different request.",
    ErrorCode.SCHEMA_ENUM_VIOLATION: "A property value is not one of the declared enum values.",
    ErrorCode.SCHEMA_UNKNOWN_PROPERTY: "The label does not allow undeclared properties.",
    ErrorCode.SCHEMA_MERGE_KEY_MISMATCH: "merge_keys do not name exactly the label's declared merge keys.",
    ErrorCode.SCHEMA_ENDPOINT_LABEL_NOT_ALLOWED: "The relationship type does not allow an endpoint of that label.",
    ErrorCode.SCHEMA_INVALID: "A schema document failed validation (publishing or loading).",
    ErrorCode.NODE_NOT_FOUND: "The node to delete or merge does not exist (details.merged_into names the survivor when it was merged); for graph_improve, details.missing_nodes lists every used node the graph does not hold.",
    ErrorCode.RELATIONSHIP_NOT_FOUND: "The relationship to delete does not exist; for graph_improve, details.missing_relationships lists every used edge the graph does not hold.",
    ErrorCode.NODE_HAS_RELATIONSHIPS: "delete_node without detach on a node that still has relationships.",
    ErrorCode.POLICY_DENIED: "The agent's policy does not permit writing that label or relationship type; details name it.",
    ErrorCode.LIMIT_EXCEEDED: "The request is larger than a configured limit (value bytes, properties per write, request bytes, batch items) or a fixed one (max_list_items: 10,000 values in one list property); details name the limit and its maximum.",
    ErrorCode.NODE_ALREADY_EXISTS: "A create-only write (add_<label>, or create_only=true) names a node that already exists; use update_<label> or write_node to change it.",
    ErrorCode.SCHEMA_CHANGE_UNSAFE: "Publishing would strand live nodes (a dropped label) or invalidate them (a new required property, a narrowed enum, ...); details hold the diff and its impact. Publish with force to do it anyway.",
    ErrorCode.CONFLICT: "The write would change a fact the graph holds (a property's value, or a functional relationship) and the schema's conflict policy is reject; details.conflicts hold both values with their provenance.",
    ErrorCode.CONFLICT_LOWER_CONFIDENCE: "The write would change a fact held at a higher confidence than this write's, under the keep_higher_confidence policy; details.conflicts hold both values with their provenance.",
    ErrorCode.AUTHORITY_CONFLICT: "The write would change a fact held at a higher authority than this write's (the schema's authority ranks, lowest along each write's lineage through the observations it cites); details.conflicts hold both values with their provenance and both authorities. Under the review policy the write is held for a reviewer instead.",
    ErrorCode.PROPOSAL_NOT_PENDING: "The proposal to decide does not exist or was already approved or rejected.",
    ErrorCode.SELF_REVIEW: "The reviewer deciding a proposal is the agent that wrote it: a held write needs a second pair of eyes (unless its label or type says self_review: true); details name the proposal and the agent.",
    ErrorCode.LOG_UNAVAILABLE: "The log's database could not be reached or written (a full disk; details.cause says what the database said), the connection broke, or the log's write lock was not free within the lock timeout; nothing was appended. Retry with the same idempotency_key.",
    ErrorCode.POSSIBLE_DUPLICATE: "The node to create is probably one the graph holds (details.candidates, with scores and reasons); write to the candidate, or send resolution: new.",
    ErrorCode.IDENTITY_CONFLICT: "The write names a node the graph holds by its merge keys, but an identity property or a vetoing evidence field disagrees (another number, another date of birth): probably another thing of the same name. details name the node, each disputed field's held and written value, and the candidates the write may mean instead (as POSSIBLE_DUPLICATE's); name it by other keys, or send resolution: same if it is this one.",
    ErrorCode.MERGE_NOT_FOUND: "unmerge_nodes names no merge, or one already undone (details.undone says which).",
    ErrorCode.MERGE_NOT_UNDOABLE: "The merge cannot be undone as recorded: its survivor is gone (merged or deleted since), a restored relationship would end at a node deleted since, or the people it merged were forgotten; details name it.",
    ErrorCode.JOB_NOT_FOUND: "No such job, or not yours to see (an admin sees every job); job_list lists yours.",
    ErrorCode.JOB_TARGET_BUSY: "Another job holds the target (running, or interrupted and waiting to be resumed or cancelled); details.job names it.",
    ErrorCode.OBSERVATION_NOT_FOUND: "A write cites an observation (or a passage ID#START of one) the log does not hold (details.missing lists the ids); record it first with record_observation.",
    ErrorCode.FEEDBACK_ALREADY_GIVEN: "graph_improve: you gave other feedback on this sessionId (and answerId) already, and feedback counts once per answer; details name the earlier event. Name the answer with answerId to rate another one.",
    ErrorCode.SOURCE_RETRACTED: "The write names a source a retraction took back (details.retraction names it): a write restating it is refused unless it names a new source, one no retraction took back (write_node's source argument); unretract the retraction to write it again.",
    ErrorCode.OBSERVATION_RETRACTED: "The write cites an observation a retraction took back (details.observation, details.retraction): cite another, or name a new source that says it (one no retraction took back).",
    ErrorCode.RETRACTION_NOT_FOUND: "unretract names no retraction the log holds, or one already undone (details.undone names the event).",
    ErrorCode.EMBEDDER_UNAVAILABLE: "graph_query's meaning search ([embeddings] provider) could not load its embedder on this server (details.provider names it, the message says what is missing); the operator's to fix. search_observations and search_nodes answer by words meanwhile.",
}


class GateRejection(Exception):
    """Raised anywhere inside an operation; the operation returns it as a ``Rejected`` result."""

    def __init__(self, code: ErrorCode, message: str, details: dict[str, Any] | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details or {}


def relationship_not_found(identity: str) -> GateRejection:
    """``RELATIONSHIP_NOT_FOUND`` for the relationship ``identity`` names: one wording for
    the gate's deletion and for a caller who may not see it (``server.unseen``)."""
    return GateRejection(
        ErrorCode.RELATIONSHIP_NOT_FOUND,
        f"relationship {identity} does not exist",
        {"identity": identity},
    )
