"""The Write Gate: validate against the schema, compute provenance, append — or refuse.

``Gate`` is the whole Python API; the CLI and the MCP tools are thin faces over it. Its
write methods (``write_node`` …, ``call``) are in ``gate.write_api``, feedback on an
answer (``graph_improve``) in ``gate.feedback``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

from writegate.eventlog import Actor, Log, open_log
from writegate.eventlog.store import BUSY_TIMEOUT, Durability
from writegate.gate.audit.integrity import IntegrityReport, check_integrity
from writegate.gate.errors import GateRejection
from writegate.gate.feedback import FeedbackOperations, FeedbackSettings
from writegate.gate.forgetting import ForgetResult, forget
from writegate.gate.formula import FormulaProvider, formula_name, load_formula_provider
from writegate.gate.limits import DEFAULT_LIMITS, Limits
from writegate.gate.migration import MigrateResult, migrate_to
from writegate.gate.models import (
    RefreshResult,
    Rejected,
)
from writegate.gate.planning import Planner
from writegate.gate.reads.observations import ObservationReader
from writegate.gate.reads.query import DEFAULT as DEFAULT_QUERY
from writegate.gate.reads.query import QueryConfig
from writegate.gate.reads.reader import GraphReader
from writegate.gate.reads.recall import Nearest
from writegate.gate.reads.scoped import ScopedReader
from writegate.gate.rejections import RejectionLog
from writegate.gate.results import rejected
from writegate.gate.retention import RetainResult, retain
from writegate.gate.retraction_api import RetractionOperations
from writegate.gate.review import Reviews
from writegate.gate.schema import (
    FileSchemaSource,
    LoadedSchema,
    LogSchemaSource,
    SchemaCache,
    SchemaDocument,
    SchemaSource,
    SchemaSourceUnavailable,
)
from writegate.gate.schema.cache import unavailable
from writegate.gate.schema.publishing import SchemaPublishResult, publish_schema
from writegate.gate.schema.registry import relationship_types
from writegate.gate.scopes import ALL, Scopes
from writegate.gate.write_api import WriteOperations
from writegate.gate.writing import (
    Writer,
)
from writegate.projections.state import StateProjection
from writegate.projections.state.scoped import ScopedState

POLICY_ENV = "WRITE_GATE_UNKNOWN_LABEL_POLICY"
POLICIES = ("remap", "reject")


class Gate(WriteOperations, FeedbackOperations, RetractionOperations):
    """The gate over one log. Thread-safe; share one per process."""

    def __init__(
        self,
        log: Log,
        schema: SchemaSource | SchemaCache | None = None,
        *,
        formula: FormulaProvider | str | None = None,
        unknown_label_policy: str | None = None,
        default_actor: Actor | None = None,
        limits: Limits | None = None,
        feedback: FeedbackSettings | None = None,
    ) -> None:
        states = [p for p in log.inline if isinstance(p, StateProjection)]
        if not states:
            raise ValueError("the gate needs a log opened with the StateProjection inline")
        self.log = log
        self.state = states[0]
        if schema is None:
            schema = LogSchemaSource(log)
        self.schema = schema if isinstance(schema, SchemaCache) else SchemaCache(schema)
        self.formula = (
            formula
            if formula is not None and not isinstance(formula, str)
            else load_formula_provider(formula or os.environ.get("WRITE_GATE_FORMULA_PROVIDER"))
        )
        self.formula_name = formula_name(self.formula)
        self._policy_override = _policy(unknown_label_policy, "unknown_label_policy")
        self._policy_env = _policy(os.environ.get(POLICY_ENV), POLICY_ENV)
        self.default_actor = default_actor or Actor(agent="python-api")
        self._limits = limits
        self.feedback = feedback or FeedbackSettings()  # ``[recall]``: graph_improve's rate
        self.nearest: Nearest | None = None  # an embedder's search (``[embeddings]``), if any
        self.query = DEFAULT_QUERY  # how graph_query answers (``[recall] rrf_k`` tunes it)
        self.rejections = RejectionLog(log)
        planner = Planner(self.state, self.formula, self.formula_name, self.unknown_label_policy)
        self.writer = Writer(
            log, planner, self.rejections, self.schema.for_write, self.limits, self.schema.reloaded
        )

    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        create: bool = True,
        schema_file: str | Path | None = None,
        formula: FormulaProvider | str | None = None,
        unknown_label_policy: str | None = None,
        durability: Durability = "normal",
        default_actor: Actor | None = None,
        limits: Limits | None = None,
        readonly: bool = False,
        busy_timeout: float = BUSY_TIMEOUT,
        feedback: FeedbackSettings | None = None,
    ) -> Gate:
        """Open (or create) the log at ``path`` — a SQLite file, or a ``postgresql://`` address —
        with its state read model; schemas come from the log unless ``schema_file`` names a
        document on disk. ``readonly`` opens an existing log without writing anything to it
        (an auditor's copy): reads work, writes fail. A write waits up to ``busy_timeout``
        seconds for the log's write lock, then is refused ``LOG_UNAVAILABLE``."""
        log = open_log(
            path,
            inline=[StateProjection()],
            create=create,
            durability=durability,
            readonly=readonly,
            busy_timeout=busy_timeout,
        )
        source: SchemaSource = (
            FileSchemaSource(schema_file) if schema_file else LogSchemaSource(log)
        )
        return cls(
            log,
            source,
            formula=formula,
            unknown_label_policy=unknown_label_policy,
            default_actor=default_actor,
            limits=limits,
            feedback=feedback,
        )

    def close(self) -> None:
        self.rejections.close()  # what waits for the write lock: recorded now, or said lost
        self.log.close()

    def __enter__(self) -> Gate:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def verify(
        self,
        *,
        checkpoints: Mapping[str, int] | None = None,
        expect_head: tuple[int, str] | None = None,
        unreachable: Mapping[str, str] | None = None,
    ) -> IntegrityReport:
        """Chain, triggers, state, projection checkpoints, an anchor (``gate.audit.integrity``)."""
        return check_integrity(
            self.log,
            self.state,
            checkpoints=checkpoints,
            expect_head=expect_head,
            unreachable=unreachable,
        )

    def forget(
        self,
        label: str,
        keys: Mapping[str, Any],
        *,
        reason: str,
        dry_run: bool = False,
        actor: Actor | None = None,
    ) -> ForgetResult | Rejected:
        """Forget a personal node: its sealed values, read-model rows and refusals
        (``gate.forgetting``); a dry run says what would go."""
        try:
            schema = self.current_schema()
            who = actor or self.default_actor
            return forget(
                self.log, self.state, schema, who, label, keys, reason=reason, dry_run=dry_run
            )
        except SchemaSourceUnavailable as exc:  # no schema: nothing is personal yet
            return rejected(unavailable(exc, self.schema.has_snapshot))
        except GateRejection as exc:
            return rejected(exc)

    def retain(
        self, *, dry_run: bool = False, actor: Actor | None = None
    ) -> RetainResult | Rejected:
        """Forget the personal values the schema's retention periods have passed, with a
        receipt (``gate.retention``); a dry run says what would go."""
        try:
            who = actor or self.default_actor
            return retain(self.log, self.state, self.current_schema(), who, dry_run=dry_run)
        except SchemaSourceUnavailable as exc:  # no schema: no retention declared yet
            return rejected(unavailable(exc, self.schema.has_snapshot))
        except GateRejection as exc:
            return rejected(exc)

    def migrate(
        self, dest: str | Path, *, batch: int = 1000, actor: Actor | None = None
    ) -> MigrateResult | Rejected:
        """Write this log into a new one at ``dest`` with its personal values sealed, after
        which a receipt names this head (``gate.migration``); this log stays as it was."""
        try:
            try:
                schema: LoadedSchema | None = self.current_schema()
            except SchemaSourceUnavailable:
                schema = None
            who = actor or self.default_actor
            return migrate_to(self.log, schema, dest, who, batch=batch)
        except GateRejection as exc:
            return rejected(exc)

    # -- settings and the schema -------------------------------------------------------

    def limits(self) -> Limits:
        """Explicit setting > the schema document's ``limits`` > the defaults."""
        if self._limits is not None:
            return self._limits
        try:
            snapshot = self.schema.current()
        except SchemaSourceUnavailable:
            return DEFAULT_LIMITS
        return snapshot.limits or DEFAULT_LIMITS

    def unknown_label_policy(self, snapshot: LoadedSchema | None = None) -> str:
        """Explicit setting > WRITE_GATE_UNKNOWN_LABEL_POLICY > the schema's own > remap."""
        document = snapshot.unknown_label_policy if snapshot else None
        return self._policy_override or self._policy_env or document or "remap"

    def refresh_schema_cache(self) -> RefreshResult | Rejected:
        """Reload the schema from its source and swap it in; on failure keep the old one."""
        try:
            snapshot = self.schema.refresh()
        except SchemaSourceUnavailable as exc:
            return rejected(unavailable(exc, self.schema.has_snapshot))
        registry = snapshot.registry
        return RefreshResult(
            loaded=len(registry.all_canonical_labels()),
            relationship_types=len(relationship_types(registry)),
            schema_version=snapshot.version,
            source=self.schema.source.describe(),
        )

    @property
    def reviews(self) -> Reviews:
        """The review lane: writes held for a reviewer, and decisions (``gate.review``)."""
        return Reviews(self)

    def reader(
        self,
        query: QueryConfig | None = None,
        nearest: Nearest | None = None,
        scopes: Scopes = ALL,
    ) -> GraphReader:
        """The reads over this log (``gate.reads``): the one way every face gets them, with
        decay from the current schema's half-lives and ``graph_query`` answered by the
        recipe ``query`` (default: the gate's ``query``), with
        an embedder's ``nearest`` search as more rankings when one is configured; a caller
        granted ``scopes`` reads only inside them."""
        config = replace(query or self.query, feedback_floor=self.feedback.floor)
        if scopes.granted is not None:  # a caller granted some scopes (``gate.reads.scoped``)
            return ScopedReader(self.log, scopes.granted, self._half_lives, config)
        searching = nearest or self.nearest
        return GraphReader(self.log, self.state, self._half_lives, config, searching)

    def observation_reader(self, scopes: Scopes = ALL) -> ObservationReader:
        """The reads of observations (``gate.reads.observations``): found by their words,
        opened by id; every face gets them here. A caller granted ``scopes`` finds only
        the observations kept in them (one outside is not found, as one never kept)."""
        if scopes.granted is not None:
            return ObservationReader(self.log, ScopedState(scopes.granted))
        return ObservationReader(self.log, self.state)

    def _half_lives(self) -> Mapping[str, timedelta]:
        """The current schema's half-lives (none while no schema loads: reads never fail
        for want of decay)."""
        try:
            return self.current_schema().half_lives
        except SchemaSourceUnavailable:
            return {}

    def current_schema(self) -> LoadedSchema:
        """The snapshot writes are checked against now (loading it on first use)."""
        return self.schema.current()

    def publish_schema(
        self,
        document: SchemaDocument | Mapping[str, Any] | str | Path,
        *,
        actor: Actor | None = None,
        force: bool = False,
    ) -> SchemaPublishResult | Rejected:
        """Append a schema to the log (``schema.published``) and use it at once in this gate
        (other gates on the log take it on their next write, or their next refresh).

        A change that would strand or invalidate live data is ``SCHEMA_CHANGE_UNSAFE`` unless
        ``force``; the result (and the event) carry the diff: see ``gate.schema.publishing``.
        """
        result = publish_schema(
            self.log, self.state, document, actor or self.default_actor, force=force
        )
        if isinstance(result, SchemaPublishResult) and result.status == "published":
            self.refresh_schema_cache()  # a forget or migrate next must not read the old one
        return result


def _policy(value: str | None, where: str) -> str | None:
    if value is None or value == "":
        return None
    if value not in POLICIES:
        raise ValueError(f"{where} must be one of {POLICIES}, not {value!r}")
    return value
