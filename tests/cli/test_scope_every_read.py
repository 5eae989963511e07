"""Every CLI read keeps to ``--scope`` and ``[scopes] disabled`` as the MCP reads do (issue
40, defect 6): a graph read answers inside the grant; a read of the whole log — the log, the
audits, the report, a node's past, a subject's export, the review queue — shows every
scope's writes, so a grant of fewer than every scope is refused in one line
(``POLICY_DENIED``), as the tools refuse it, and prints nothing of the graph."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import as_json, writegate
from tests.conftest import AGENT
from tests.server.test_scope_grants import SECRETS, scoped_log

BLACKTHORN = "Bramble:name=blackthorn"
LINK = ("LINK", "Orchard:name=apple one", BLACKTHORN)
WHOLE_LOG = {
    "show node": ("show", "node", BLACKTHORN),
    "show relationship": ("show", "relationship", *LINK),
    "audit node": ("audit", "node", BLACKTHORN),
    "audit relationship": ("audit", "relationship", *LINK),
    "audit agent": ("audit", "agent", AGENT.agent),
    "audit source": ("audit", "source", "test"),
    "audit method": ("audit", "method", "manual"),
    "audit conflicts": ("audit", "conflicts"),
    "audit duplicates": ("audit", "duplicates"),
    "audit feedback": ("audit", "feedback"),
    "log": ("log",),
    "log --node": ("log", "--node", BLACKTHORN),
    "report": ("report",),
    "export subject": ("export", "subject", BLACKTHORN),
    "review list": ("review", "list"),
}


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return Path(scoped_log(tmp_path_factory.mktemp("scoped") / "log.db"))


def _leaked(text: str) -> list[str]:
    return [s for s in SECRETS if s.lower() in text.lower()]


@pytest.mark.parametrize("command", WHOLE_LOG)
def test_a_read_of_the_whole_log_is_refused_to_a_grant_of_some_scopes(
    db: Path, command: str
) -> None:
    args = WHOLE_LOG[command]
    code = 1 if command == "audit feedback" else 0  # "no feedback was given": none was
    assert "POLICY_DENIED" not in writegate(db, *args, code=code).stderr  # the operator's
    refused = writegate(db, "--scope", "a", *args, code=1)
    name = command.removesuffix(" --node")
    assert refused.stderr == (
        f"error: POLICY_DENIED: {name} reads the whole log, every scope's writes: it needs a "
        "grant of every scope, and --scope a leave it fewer\n"
    )
    assert _leaked(refused.stdout) == []
    every = (f"--scope={s}" for s in ("a", "b", "c", "default"))  # every declared, the implicit
    assert "POLICY_DENIED" not in writegate(db, *every, *args, code=code).stderr


@pytest.fixture
def switched(db: Path, tmp_path: Path) -> Path:
    config = tmp_path / "writegate.toml"
    config.write_text('[scopes]\ndisabled = ["b"]\n')
    return config


@pytest.mark.parametrize("command", ["show node", "audit agent", "log", "report"])
def test_a_scope_switched_off_in_the_configuration_refuses_the_whole_log_reads(
    db: Path, switched: Path, command: str
) -> None:
    refused = writegate(db, "--config", str(switched), *WHOLE_LOG[command], code=1)
    assert refused.stderr.startswith(f"error: POLICY_DENIED: {command} reads the whole log")
    assert refused.stderr.endswith("and [scopes] disabled b leave it fewer\n")


def test_a_scope_switched_off_in_the_configuration_is_out_of_every_graph_read(
    db: Path, switched: Path
) -> None:
    found = as_json(db, "--config", str(switched), "search", "apple", "--format", "json")
    assert {n["merge_keys"]["name"] for n in found["nodes"]} == {
        "apple one",
        "apple two",
        "plainly",
    }
    assert found["withheld"] == {"b": 2}
    for args in (("query", "blackthorn hedgerow apple", "--format", "json"), ("export", "mermaid")):
        answer = writegate(db, "--config", str(switched), *args).stdout
        assert _leaked(answer) == [], args
    off = writegate(db, "--config", str(switched), "--scope", "b", "search", "apple", code=1)
    assert off.stderr == (
        "error: every scope this read may see is switched off ([scopes] disabled: b)\n"
    )
