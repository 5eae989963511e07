"""Integrity checks an operator or auditor runs: is the history what was written?"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from writegate.eventlog import EventLog
from writegate.projections.state import StateProjection


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


def check_integrity(
    log: EventLog,
    state: StateProjection,
    *,
    checkpoints: Mapping[str, int] | None = None,
    expect_head: tuple[int, str] | None = None,
) -> IntegrityReport:
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
    if checkpoints is not None:
        ahead = {n: c for n, c in checkpoints.items() if c > chain.head_seq}
        checks.append(
            IntegrityCheck(
                "projection checkpoints",
                not ahead,
                f"{len(checkpoints)} at or behind the head"
                if not ahead
                else "; ".join(
                    f"{n} is at {c}, ahead of the log head {chain.head_seq}"
                    for n, c in ahead.items()
                ),
            )
        )
    if expect_head is not None:
        checks.append(_anchor(log, chain.ok, *expect_head))
    return IntegrityReport(checks)


def _anchor(log: EventLog, chain_ok: bool, seq: int, digest: str) -> IntegrityCheck:
    """History up to ``seq`` is unchanged iff the chain holds and event ``seq`` has ``digest``."""
    row = log.connection().execute("SELECT hash FROM events WHERE seq = ?", (seq,)).fetchone()
    if row is None:
        return IntegrityCheck(
            "anchor", False, f"no event {seq}: the log is shorter than the anchor"
        )
    if row[0] != digest:
        return IntegrityCheck(
            "anchor", False, f"event {seq} has hash {row[0]}, not the anchored {digest}"
        )
    if not chain_ok:
        return IntegrityCheck("anchor", False, "the hash chain does not verify")
    return IntegrityCheck("anchor", True, f"history up to {seq} matches the anchor {digest[:16]}…")
