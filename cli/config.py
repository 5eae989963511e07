"""What an operator configures: ``writegate.toml``, with environment overrides.

The projections to run, and optionally the graph-backed schema registry.

```toml
[projections.graph]
kind = "graph"                      # graph | jsonl | prov | state
uri = "bolt://127.0.0.1:7687"
user = "memgraph"
password = "…"                      # better: WRITEGATE_PROJECTIONS__GRAPH__PASSWORD
dialect = "memgraph"                # or neo4j

[projections.snapshot]
kind = "jsonl"
path = "var/graph.jsonl"
format = "memorymesh"               # or mcp-memory

[projections.provenance]
kind = "prov"
path = "var/provenance.nt"          # N-Triples; `writegate export prov` makes Turtle/JSON-LD

[schema_source]                     # optional: seed 000's graph-backed registry
source = "graph"
projection = "graph"                # whose Bolt server holds the (:Schema) nodes

[recall]
feedback_alpha = 0.3                # how far one answer's feedback moves a used fact's weight
feedback_floor = 0.5                # a ranking multiplies relevance by at least this
rrf_k = 60                          # graph_query fuses rankings by 1/(rrf_k + rank)

[embeddings]                        # optional: vectors of meaning, made by a follower
provider = "wordllama"              # adds the projection `vectors` (status, follow, rebuild);
                                    # "minilm" (writegate[minilm], on torch) finds more

[rejections]
max_age_days = 30                   # refused requests older than this are dropped (a count
                                    # cap applies too: keep, default 100,000 rows)

[scopes]
disabled = ["hr"]                   # switched off for every agent: the graph tools answer
                                    # {disabled: true} to one left with no scope ("default":
                                    # all of a log that declares none); the CLI's reads too
```

Any value can be overridden by ``WRITEGATE_PROJECTIONS__<NAME>__<KEY>`` (pydantic-settings'
nested environment variables); the password is a secret and never printed.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from writegate.eventlog import Log
from writegate.gate.feedback import DEFAULT_ALPHA, FeedbackSettings
from writegate.gate.limits import Limits
from writegate.gate.rejection_records import MAX_AGE_DAYS, MAX_KEPT
from writegate.gate.server.oauth_settings import OAuthSettings
from writegate.projections.state import DEFAULT_FLOOR
from writegate.projections.vectors.settings import VECTORS, EmbeddingSettings

if TYPE_CHECKING:  # each store's code (the Bolt driver, rdflib) loads only when it is opened
    from writegate.gate.schema.graph import GraphSchemaSource
    from writegate.projections.contract import Projector
    from writegate.projections.graph import BoltTarget

CONFIG_ENV = "WRITEGATE_CONFIG"
DEFAULT_CONFIG = Path("writegate.toml")
_STRICT = ConfigDict(extra="forbid")


class GraphConfig(BaseModel):
    model_config = _STRICT

    kind: Literal["graph"]
    uri: str
    user: str = ""
    password: SecretStr = SecretStr("")
    database: str | None = None
    dialect: Literal["memgraph", "neo4j"] = "memgraph"
    retry_seconds: float = 30.0
    batch: int = Field(default=2000, ge=1)

    def describe(self) -> str:
        return f"{self.dialect} at {self.uri}" + (f" db {self.database}" if self.database else "")

    def target(self) -> BoltTarget:
        from writegate.projections.graph import BoltTarget

        return BoltTarget(
            uri=self.uri,
            user=self.user,
            password=self.password.get_secret_value(),
            database=self.database,
            dialect=self.dialect,
            retry_seconds=self.retry_seconds,
        )

    def open(self, name: str, log: Log) -> Projector:
        from writegate.projections.graph import GraphProjector

        return GraphProjector(self.target(), name, log)

    def registry(self) -> GraphSchemaSource:
        """Seed 000's registry on this server, read without retries: every write waits on it."""
        from writegate.gate.schema.graph import GraphSchemaSource

        fast = replace(self.target(), retry_seconds=0.0)
        return GraphSchemaSource(fast.driver, fast.database, fast.uri)


class JsonlConfig(BaseModel):
    model_config = _STRICT

    kind: Literal["jsonl"]
    path: Path
    format: Literal["memorymesh", "mcp-memory"] = "memorymesh"
    batch: int = Field(default=50_000, ge=1)

    def describe(self) -> str:
        return f"{self.format} JSONL at {self.path}"

    def open(self, name: str, log: Log) -> Projector:
        from writegate.projections.jsonl import JsonlProjector

        return JsonlProjector(self.path, log, name, self.format)


class ProvConfig(BaseModel):
    model_config = _STRICT

    kind: Literal["prov"]
    path: Path  # N-Triples; `writegate export prov NAME --format turtle|json-ld` converts
    batch: int = Field(default=20_000, ge=1)

    def describe(self) -> str:
        return f"PROV-O N-Triples at {self.path}"

    def open(self, name: str, log: Log) -> Projector:
        from writegate.projections.prov import ProvProjector

        return ProvProjector(self.path, name, log)


class StateConfig(BaseModel):
    model_config = _STRICT

    kind: Literal["state"]
    path: Path
    batch: int = Field(default=20_000, ge=1)

    def describe(self) -> str:
        return f"state read model at {self.path}"

    def open(self, name: str, log: Log) -> Projector:
        from writegate.projections.statestore import StateStore

        return StateStore(self.path, name)


class VectorsConfig(BaseModel):
    """The vector follower: the projection ``vectors`` that ``[embeddings]`` adds (it is not
    written under ``[projections]``: one place names the embedder)."""

    model_config = _STRICT

    kind: Literal["vectors"]
    embeddings: EmbeddingSettings

    @property
    def batch(self) -> int:
        return self.embeddings.batch

    def describe(self) -> str:
        where = f" in {self.embeddings.path}" if self.embeddings.path else ""
        return f"vectors by {self.embeddings.provider}{where}"

    def open(self, name: str, log: Log) -> Projector:
        return self.embeddings.open(name, log)


ProjectionConfig = Annotated[
    GraphConfig | JsonlConfig | ProvConfig | StateConfig | VectorsConfig,
    Field(discriminator="kind"),
]


class GraphSchemaConfig(BaseModel):
    """Seed 000's graph-backed registry: ``(:Schema {allowed: true})`` nodes on a Bolt server,
    reached through a configured graph projection's connection."""

    model_config = _STRICT

    source: Literal["graph"]
    projection: str = "graph"

    def open(self, projections: dict[str, Any]) -> GraphSchemaSource:
        graph = projections.get(self.projection)
        if not isinstance(graph, GraphConfig):
            raise ConfigError(f"[schema_source] names {self.projection!r}, not a graph projection")
        return graph.registry()


Role = Literal["writer", "reader", "auditor", "reviewer", "admin"]


class ServeSettings(BaseModel):
    """Every ``writegate serve`` option, settable in ``[serve]`` and as
    ``WRITEGATE_SERVE__<OPTION>``; an option given on the command line wins."""

    model_config = _STRICT

    http: bool = False
    host: str = "127.0.0.1"
    port: int = Field(default=8765, ge=0, le=65535)  # 0: a free one, announced
    public_hosts: list[str] = Field(default_factory=list)
    allow_origins: list[str] = Field(default_factory=list)
    tokens: Path | None = None
    agent_id: str = "stdio-agent"
    roles: list[Role] = Field(default_factory=lambda: list[Role](["writer"]))
    scopes: list[str] = Field(default_factory=list)  # the stdio agent's (empty: every scope)
    policy: list[Path] = Field(default_factory=list)
    tools: Literal["all", "generic", "labels"] = "generic"
    output_schemas: bool = False
    log_level: Literal["debug", "info", "warning", "error"] = "warning"
    log_format: Literal["plain", "json"] = "plain"
    access_log: bool = False
    metrics: bool = False
    session_idle_timeout: float = Field(default=300.0, ge=1)  # seconds without a request
    unknown_label_policy: Literal["remap", "reject"] | None = None
    oauth: OAuthSettings | None = None  # JWTs from an authorization server, beside tokens


class LogSettings(BaseModel):
    """``[log]``, or ``WRITEGATE_LOG__<KEY>``: how the log's database is used."""

    model_config = _STRICT

    # seconds a write waits for the log's write lock while another process writes (SQLite's
    # busy timeout, PostgreSQL's lock timeout); then it is refused LOG_UNAVAILABLE, to retry
    busy_timeout: float = Field(default=60.0, gt=0, le=3600)


class RecallSettings(BaseModel):
    """``[recall]``, or ``WRITEGATE_RECALL__<KEY>``: how answers are ranked and rated."""

    model_config = _STRICT

    # the rate a graph_improve moves weights at (recorded in its event: a change moves only
    # later feedback), and the floor of a fact's ranking factor (feedback never buries one)
    feedback_alpha: float = Field(default=DEFAULT_ALPHA, gt=0, le=1)
    feedback_floor: float = Field(default=DEFAULT_FLOOR, ge=0, le=1)
    rrf_k: int = Field(default=60, ge=1, le=10_000)  # reciprocal rank fusion's constant

    def feedback(self) -> FeedbackSettings:
        return FeedbackSettings(alpha=self.feedback_alpha, floor=self.feedback_floor)


class RejectionSettings(BaseModel):
    """``[rejections]``, or ``WRITEGATE_REJECTIONS__<KEY>``: how long refused requests are
    kept for auditors (``gate.rejections``; unset: the environment's, else 100,000 rows and
    no age limit)."""

    model_config = _STRICT

    keep: int | None = Field(default=None, ge=0, le=MAX_KEPT)  # rows (0: none)
    max_age_days: float | None = Field(default=None, gt=0, le=MAX_AGE_DAYS, allow_inf_nan=False)


class ScopeSettings(BaseModel):
    """``[scopes]``, or ``WRITEGATE_SCOPES__<KEY>``: scopes switched off for every caller
    of the server (seed 004's per-project gate)."""

    model_config = _STRICT

    disabled: list[Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")]] = Field(
        default_factory=list
    )


class ConfigError(ValueError):
    """The configuration is unreadable or invalid: one line per problem, each saying where."""

    def __init__(self, *problems: str) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="WRITEGATE_", env_nested_delimiter="__", extra="forbid"
    )

    projections: dict[str, ProjectionConfig] = Field(default_factory=dict)
    schema_source: GraphSchemaConfig | None = None
    serve: ServeSettings = Field(default_factory=ServeSettings)
    limits: Limits | None = None  # how large a write may be (over the schema's own)
    log: LogSettings = Field(default_factory=LogSettings)
    recall: RecallSettings = Field(default_factory=RecallSettings)
    embeddings: EmbeddingSettings | None = None  # meaning, optionally: off unless set
    scopes: ScopeSettings = Field(default_factory=ScopeSettings)  # scopes switched off
    rejections: RejectionSettings = Field(default_factory=RejectionSettings)

    @model_validator(mode="after")
    def _vectors_follow_embeddings(self) -> Settings:
        """``[embeddings]`` adds the projection ``vectors``, which nothing else may name."""
        named = [n for n, c in self.projections.items() if isinstance(c, VectorsConfig)]
        if named:
            raise ValueError(
                f"[projections.{named[0]}]: kind 'vectors' is what [embeddings] adds; "
                "configure [embeddings] instead"
            )
        if self.embeddings is not None:
            if VECTORS in self.projections:
                raise ValueError(
                    f"[projections.{VECTORS}]: the name is the vector follower's while "
                    "[embeddings] is set; rename the projection"
                )
            vectors = VectorsConfig(kind="vectors", embeddings=self.embeddings)
            self.projections[VECTORS] = vectors
        return self

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # the environment wins over the file (the file's path is bound by ``load_settings``)
        return (init_settings, env_settings, TomlConfigSettingsSource(settings_cls))


def load_settings(path: Path | None = None) -> Settings:
    """Read ``path`` (else ``writegate.toml`` if present) and the environment over it."""
    if path is not None and not path.exists():
        raise ConfigError(f"config file {path} does not exist")
    chosen = path if path is not None else (DEFAULT_CONFIG if DEFAULT_CONFIG.exists() else None)

    class Bound(Settings):
        model_config = SettingsConfigDict(**{**Settings.model_config, "toml_file": chosen})

    from writegate.cli.config_errors import explain, mistyped_sections

    try:
        settings = Bound()
    except ValueError as exc:  # pydantic's ValidationError, TOML decode errors
        problems = explain(exc, Settings, chosen)
        raise ConfigError(*(f"invalid configuration: {p}" for p in problems)) from exc
    if problems := mistyped_sections(os.environ, Settings.model_fields):
        raise ConfigError(*(f"invalid configuration: {p}" for p in problems))
    return settings
