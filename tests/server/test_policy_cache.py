"""Write decisions are remembered per (agent, roles, tool, label) — and only that: another
agent, role set or tool is asked afresh, and a new catalog forgets them all."""

from __future__ import annotations

from tests.conftest import FIXTURES
from writegate.gate.server.policy import DEFAULT_POLICY_FILE, Policy, Principal

TOUCHED = [("Label", "Event"), ("Label", "Person")]


def _policy() -> Policy:
    policy = Policy.load([DEFAULT_POLICY_FILE, FIXTURES / "policies-event-writer.cedar"])
    policy.declare_tools({"write_node": "write", "get_node": "read"})
    return policy


def test_remembered_answers_stay_each_principals_own() -> None:
    policy = _policy()
    bot = Principal("calendar-bot", ("writer",))
    alice = Principal("alice", ("writer",))
    reader = Principal("alice", ("reader",))
    for _ in range(2):  # the second round is answered from memory, the same way
        assert policy.may_write(bot, "write_node", TOUCHED) == [True, False]
        assert policy.may_write(alice, "write_node", TOUCHED) == [True, True]
        assert policy.may_write(reader, "write_node", TOUCHED) == [False, False]
    # the bot's restriction is on write actions: the same labels through a read tool pass
    assert policy.may_write(bot, "get_node", TOUCHED) == [True, True]


def test_a_new_catalog_forgets_what_was_remembered() -> None:
    policy = _policy()
    alice = Principal("alice", ("writer",))
    assert policy.may_write(alice, "write_node", TOUCHED) == [True, True]
    policy.declare_tools({"get_node": "read"})  # write_node is gone from the catalog
    assert policy.may_write(alice, "write_node", TOUCHED) == [False, False]
