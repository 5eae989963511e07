"""The schema's ``authority`` section: how far it trusts extraction methods, sources, agents.

```yaml
authority:
  methods: {manual: 3, api: 2, parsed: 2, llm: 1}
  sources: {crm.csv: 3, scraped-web: 1}
  agents: {hr-import: 3, chat-agent: 1}
  hold: [Person, WORKS_FOR]
```

A higher rank is more authority. The flat form the issue shows
(``authority: {manual: 3, llm: 1}``) ranks methods. A method the section does not rank
ranks 0, below every ranked one (a new method is not trusted by omission); a source it does
not rank lowers nothing (sources are free text: only those named are ranked), and so does
an agent it does not rank (agents are ranked by the id their credential authenticates,
the event's actor: never by what a write says). A write of lower authority than a value it
would supersede is refused (``AUTHORITY_CONFLICT``), or, for the labels and relationship
types listed in ``hold``, held for a reviewer (a name there that is no label or type of
the schema holds nothing). A schema
without the section ranks nothing: no write carries an authority and conflicts are decided
as they always were.

The rank of what a writer declares is read here (stateless); the lowest along the write's
lineage, through the observations it cites, is ``gate.authority``'s.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from writegate.language import Authority

UNRANKED = 0  # the rank of a method the section does not name
Lower = Literal["refuse", "review"]  # what a write of lower authority meets
_KEYS = {"methods", "sources", "agents", "hold"}


class AuthorityDoc(BaseModel):
    model_config = ConfigDict(extra="forbid")

    methods: dict[str, int] = Field(default_factory=dict)
    sources: dict[str, int] = Field(default_factory=dict)
    agents: dict[str, int] = Field(default_factory=dict)  # by the authenticated agent's id
    # labels and relationship types whose writes of lower authority are held, not refused
    hold: list[str] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _flat(cls, data: Any) -> Any:
        """``{manual: 3, llm: 1}``: the methods' ranks."""
        if isinstance(data, dict) and data and not _KEYS & set(data):
            return {"methods": data}
        return data


def on_lower(doc: AuthorityDoc | None, name: str) -> Lower:
    """What a write of lower authority to label or type ``name`` meets."""
    return "review" if doc is not None and name in doc.hold else "refuse"


def declared(doc: AuthorityDoc | None, method: str, source: str) -> Authority | None:
    """The authority of a write's own method and source (None: the schema ranks nothing)."""
    if doc is None:
        return None
    own = Authority(rank=doc.methods.get(method, UNRANKED), by=f"method {method}")
    ranked = doc.sources.get(source)
    if ranked is not None and ranked < own.rank:
        return Authority(rank=ranked, by=f"source {source}")
    return own


def of_agent(doc: AuthorityDoc | None, agent: str, own: Authority | None) -> Authority | None:
    """``own`` lowered to the rank of the agent who wrote (when the section ranks it)."""
    ranked = doc.agents.get(agent) if doc is not None else None
    if own is None or ranked is None or ranked >= own.rank:
        return own
    return Authority(rank=ranked, by=f"agent {agent}")
