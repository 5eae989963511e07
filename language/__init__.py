"""The event language: what the gate writes into the log and every reader takes out of it.

``eventlog`` stores opaque events; this package gives them meaning. Each event type has
one pydantic model for its payload (``NodeWritten``, ``RelationshipWritten``, …), a
write's provenance has one model, identities and the identifier pattern are defined
here once, and ``payload_of`` turns a stored event into its typed payload. The gate
builds these models; projections, audit, reads and regating read them — nobody reads a
payload by string key or compares event-type strings outside this package.
"""

from writegate.language.base import (
    Authority,
    GraphPayload,
    Payload,
    Superseded,
    WriteProvenance,
)
from writegate.language.corroborations import (
    Corroborated,
    NodeCorroborated,
    RelationshipCorroborated,
    corroboration_stream,
    said_of,
)
from writegate.language.feedback import (
    INITIAL_WEIGHT,
    OUTCOMES,
    TARGETS,
    FeedbackGiven,
    Outcome,
    UsedRelationship,
    feedback_stream,
    moved,
)
from writegate.language.identities import (
    IDENTIFIER,
    PSEUDONYM,
    NodeRef,
    Pseudonyms,
    clear_identity,
    is_identifier,
    node_identity,
    node_stream,
    parse_node_identity,
    pseudonymous,
    relationship_identity,
    relationship_stream,
)
from writegate.language.indexing import (
    IndexedNode,
    LabelSearchable,
    NodesIndexed,
    resolution_stream,
    search_stream,
)
from writegate.language.merges import (
    FactRecord,
    MovedRelationship,
    NodesMerged,
    NodesUnmerged,
    merge_stream,
)
from writegate.language.observations import (
    OBSERVATION_ID,
    ObservationRecorded,
    cited_observations,
    observation_id,
    observation_stream,
)
from writegate.language.payloads import (
    EVENT_TYPES,
    GRAPH_EVENT_TYPES,
    NodeDeleted,
    NodeWritten,
    ProposalDecided,
    RelationshipDeleted,
    RelationshipWritten,
    SchemaPublished,
    UnknownPayload,
    WriteProposed,
    draft,
    payload_of,
    proposal_stream,
    provenance_of,
    writer_of,
)
from writegate.language.scopes import DEFAULT_SCOPE, scope_or_default

__all__ = [
    "DEFAULT_SCOPE",
    "EVENT_TYPES",
    "GRAPH_EVENT_TYPES",
    "IDENTIFIER",
    "INITIAL_WEIGHT",
    "OBSERVATION_ID",
    "OUTCOMES",
    "PSEUDONYM",
    "TARGETS",
    "Authority",
    "Corroborated",
    "FactRecord",
    "FeedbackGiven",
    "GraphPayload",
    "IndexedNode",
    "LabelSearchable",
    "MovedRelationship",
    "NodeCorroborated",
    "NodeDeleted",
    "NodeRef",
    "NodeWritten",
    "NodesIndexed",
    "NodesMerged",
    "NodesUnmerged",
    "ObservationRecorded",
    "Outcome",
    "Payload",
    "ProposalDecided",
    "Pseudonyms",
    "RelationshipCorroborated",
    "RelationshipDeleted",
    "RelationshipWritten",
    "SchemaPublished",
    "Superseded",
    "UnknownPayload",
    "UsedRelationship",
    "WriteProposed",
    "WriteProvenance",
    "cited_observations",
    "clear_identity",
    "corroboration_stream",
    "draft",
    "feedback_stream",
    "is_identifier",
    "merge_stream",
    "moved",
    "node_identity",
    "node_stream",
    "observation_id",
    "observation_stream",
    "parse_node_identity",
    "payload_of",
    "proposal_stream",
    "provenance_of",
    "pseudonymous",
    "relationship_identity",
    "relationship_stream",
    "resolution_stream",
    "said_of",
    "scope_or_default",
    "search_stream",
    "writer_of",
]
