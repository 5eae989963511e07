"""What publishing a schema would change, and what it would do to the data already written.

``diff_documents`` (``gate.schema.comparing``) names every difference between two documents,
field by field of the schema language. ``schema_diff`` adds the impact on live data: what a
change strands or invalidates (``gate.schema.impact``), and what a new review rule or
resolution policy would have caught (``gate.schema.caught``). A change is safe when it
strands nothing and invalidates nothing; ``schema publish`` refuses any other unless forced.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, computed_field

from writegate.eventlog.sql import Sql
from writegate.gate.schema.caught import caught_impact
from writegate.gate.schema.changes import Change
from writegate.gate.schema.comparing import diff_documents
from writegate.gate.schema.document import SchemaDocument
from writegate.gate.schema.impact import Impact, live_impact
from writegate.gate.schema.registry import Schema
from writegate.projections.state import StateReader

_FROZEN = ConfigDict(frozen=True)


class SchemaDiff(BaseModel):
    """A change from one schema version to another and its impact on live data."""

    model_config = _FROZEN

    before: str | None  # the version in force (None: nothing published yet)
    after: str
    state_seq: int  # the state read model the impact was read from
    changes: list[Change]
    impact: list[Impact]
    forced: bool = False  # published although unsafe

    @computed_field  # type: ignore[prop-decorator]
    @property
    def safe(self) -> bool:
        """Nothing stranded, nothing invalidated."""
        return not self.stranded and not self.invalid

    @computed_field  # type: ignore[prop-decorator]
    @property
    def stranded(self) -> list[str]:
        return [i.name for i in self.impact if i.outcome == "stranded"]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def invalid(self) -> int:
        return sum(i.invalid for i in self.impact)

    def describe(self) -> list[str]:
        """The diff as lines for a terminal."""
        lines = [f"schema {self.before or '(none published)'} -> {self.after}"]
        lines += ["  " + c.describe() for c in self.changes] or [
            "  ~ the document is rewritten (its order): nothing a write does changes"
            if self.before not in (None, self.after)
            else "  (no changes)"
        ]
        lines.append(f"impact on live data (state at seq {self.state_seq}):")
        lines += ["  " + i.describe() for i in self.impact] or ["  (none)"]
        if self.safe:
            lines.append("safe: nothing stranded, nothing invalidated")
        else:
            lines.append(
                f"UNSAFE: {len(self.stranded)} stranded, {self.invalid} invalidated"
                + (" (published with --force)" if self.forced else "")
            )
        return lines


# -- the live data ---------------------------------------------------------------------


def schema_diff(
    conn: Sql,
    state: StateReader,
    before: SchemaDocument | None,
    after: SchemaDocument,
) -> SchemaDiff:
    """The diff from ``before`` (the schema in force) to ``after`` with its impact on the
    state read on ``conn`` (hold one snapshot or the write transaction around the call)."""
    old = Schema(before) if before is not None else None
    new = Schema(after)
    return SchemaDiff(
        before=old.version if old else None,
        after=new.version,
        state_seq=state.checkpoint(conn),
        changes=diff_documents(before, after),
        impact=[*live_impact(conn, state, old, new), *caught_impact(conn, state, before, after)],
    )


__all__ = ["Change", "SchemaDiff", "diff_documents", "schema_diff"]
