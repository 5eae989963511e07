"""Integrity checks an operator or auditor runs: is the history what was written?

Every check reads one snapshot of the log (one read transaction), so a live log — agents
appending while an auditor verifies — is checked as it stood at one commit, and the report
says which: ``head_seq``. Nothing is compared across two moments.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from writegate.eventlog import Log
from writegate.eventlog.migrating import old_hash
from writegate.eventlog.sealing import EXPIRED, FORGOTTEN
from writegate.eventlog.sql import Sql
from writegate.projections.state import StateProjection


@dataclass(frozen=True)
class IntegrityCheck:
    name: str
    ok: bool
    detail: str


@dataclass(frozen=True)
class IntegrityReport:
    checks: list[IntegrityCheck]
    head_seq: int = 0  # verified up to here: the snapshot's head (the last good seq if broken)
    head_hash: str = ""

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    @property
    def first_failure(self) -> IntegrityCheck | None:
        return next((c for c in self.checks if not c.ok), None)


def check_integrity(
    log: Log,
    state: StateProjection,
    *,
    checkpoints: Mapping[str, int] | None = None,
    unreachable: Mapping[str, str] | None = None,
    expect_head: tuple[int, str] | None = None,
) -> IntegrityReport:
    """The hash chain, the append-only triggers, the state model against a replay, projection
    checkpoints (``unreachable``: projections that could not be asked, and why) and an anchor.

    All from one snapshot. Projection checkpoints must be read before the call: a
    checkpoint read then cannot be ahead of the snapshot's head unless it is wrong. Later
    checks run only when the chain holds: comparing state with a replay of an altered log
    would only restate the chain's failure.
    """
    with log.scanning(), log.snapshot() as conn:
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
            wrong = log.verify_index()
            said = f"equals the events' own streams up to seq {chain.head_seq}"
            checks.append(IntegrityCheck("history index", wrong is None, wrong or said))
            checks.append(_state_check(log, state, conn, chain.head_seq))
        if checkpoints is not None or unreachable:
            checks.append(_projections(checkpoints or {}, unreachable or {}, chain.head_seq))
            checks.append(_let_go(log, checkpoints or {}, chain.head_seq))
        if expect_head is not None:
            checks.append(_anchor(log, chain.ok, *expect_head))
    return IntegrityReport(checks, chain.head_seq, chain.head_hash)


def _state_check(log: Log, state: StateProjection, conn: Sql, head: int) -> IntegrityCheck:
    checkpoint = state.checkpoint(conn)
    if checkpoint != head:
        return IntegrityCheck(
            "state read model", False, f"checkpoint {checkpoint} but log head {head}"
        )
    if not state.equals_replay(log, conn):
        return IntegrityCheck(
            "state read model", False, "differs from a replay of the log (edited outside the gate?)"
        )
    return IntegrityCheck("state read model", True, f"equals a replay of the log up to seq {head}")


def _projections(
    checkpoints: Mapping[str, int], unreachable: Mapping[str, str], head: int
) -> IntegrityCheck:
    ahead = {n: c for n, c in checkpoints.items() if c > head}
    problems = [f"{n} is at {c}, ahead of the log head {head}" for n, c in ahead.items()]
    problems += [f"{n} could not be read ({why})" for n, why in unreachable.items()]
    return IntegrityCheck(
        "projection checkpoints",
        not problems,
        "; ".join(problems)
        if problems
        else f"{len(checkpoints)} at or behind the head"
        if checkpoints
        else "no projection to check",
    )


def _let_go(log: Log, checkpoints: Mapping[str, int], head: int) -> IntegrityCheck:
    """A projection whose checkpoint precedes a forgetting's (or a retention's) receipt may
    still hold what was forgotten, in the clear: that fails until it is replayed (one never
    replayed holds nothing)."""
    problems = []
    for name, checkpoint in sorted(checkpoints.items()):
        if 0 < checkpoint < head:
            page = log.read(after_seq=checkpoint, to_seq=head, types=[FORGOTTEN, EXPIRED], limit=1)
            if page.events:
                problems.append(
                    f"{name} (at seq {checkpoint}) has not let go of the values forgotten at "
                    f"seq {page.events[0].seq}: replay it"
                )
    return IntegrityCheck(
        "forgotten values in projections",
        not problems,
        "; ".join(problems) if problems else "no projection holds a forgotten value",
    )


def _anchor(log: Log, chain_ok: bool, seq: int, digest: str) -> IntegrityCheck:
    """History up to ``seq`` is unchanged iff the chain holds and event ``seq`` has ``digest``."""
    stored = log.hash_at(seq)
    if stored is None:
        return IntegrityCheck(
            "anchor", False, f"no event {seq}: the log is shorter than the anchor"
        )
    if stored != digest:
        if old_hash(log, seq) == digest and chain_ok:  # taken before the log was migrated
            return IntegrityCheck(
                "anchor",
                True,
                f"history up to {seq} matches the anchor {digest[:16]}… of the log this one "
                "was migrated from (its receipt keeps that log's hashes)",
            )
        return IntegrityCheck(
            "anchor", False, f"event {seq} has hash {stored}, not the anchored {digest}"
        )
    if not chain_ok:
        return IntegrityCheck("anchor", False, "the hash chain does not verify")
    return IntegrityCheck("anchor", True, f"history up to {seq} matches the anchor {digest[:16]}…")
