"""Integrity checks an operator or auditor runs: is the history what was written?"""

from __future__ import annotations

from dataclasses import dataclass

from eventlog import EventLog
from projections.state import StateProjection


@dataclass(frozen=True)
class IntegrityCheck:
    name: str
    ok: bool
    detail: str


@dataclass(frozen=True)
class IntegrityReport:
    checks: list[IntegrityCheck]

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    @property
    def first_failure(self) -> IntegrityCheck | None:
        return next((c for c in self.checks if not c.ok), None)


def check_integrity(log: EventLog, state: StateProjection) -> IntegrityReport:
    """The hash chain, the append-only triggers, and the state model against a replay.

    Later checks run only when the chain holds: comparing state with a replay of an
    altered log would only restate the chain's failure.
    """
    chain = log.verify()
    checks = [IntegrityCheck("hash chain", chain.ok, chain.describe())]
    missing = log.missing_triggers()
    checks.append(
        IntegrityCheck(
            "append-only triggers",
            not missing,
            "all present" if not missing else f"missing: {', '.join(missing)}",
        )
    )
    if chain.ok:
        conn = log.connection()
        checkpoint = state.checkpoint(conn)
        same = state.snapshot(conn) == state.rebuilt_snapshot(log)
        in_step = checkpoint == chain.head_seq
        checks.append(
            IntegrityCheck(
                "state read model",
                same and in_step,
                "equals a replay of the log"
                if same and in_step
                else (
                    "differs from a replay of the log (edited outside the gate?)"
                    if not same
                    else f"checkpoint {checkpoint} but log head {chain.head_seq}"
                ),
            )
        )
    return IntegrityReport(checks)
