"""Every CLI read keeps to ``--scope`` and ``[scopes] disabled`` as the MCP reads do (issue
40, defect 6): a graph read answers inside the grant; a read of the whole log — the log, the
audits, the report, a node's past, a subject's export, the review queue — shows every
scope's writes, so a grant of fewer than every scope is refused in one line
(``POLICY_DENIED``), as the tools refuse it, and prints nothing of the graph. On each backend."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, assume, given, settings

from tests.cli.conftest import as_json, writegate
from tests.conftest import AGENT
from tests.gate.scoped import LABELS, SCHEMA, link, word, write
from tests.gate.test_scopes import GRAPHS
from tests.server.test_scope_grants import SECRETS, scoped_log
from writegate.cli.main import cli
from writegate.gate import Gate

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


NewLog = Callable[[Path], str | Path]


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def new_log(request: pytest.FixtureRequest) -> NewLog:
    """Where a new log goes on the backend under test: a file in the folder, or a database."""
    if request.param == "sqlite":
        return lambda folder: folder / "log.db"
    server = request.getfixturevalue("postgres")
    return lambda folder: str(server.create_database(f"wg_{uuid.uuid4().hex}"))


@pytest.fixture(scope="module")
def db(new_log: NewLog, tmp_path_factory: pytest.TempPathFactory) -> str | Path:
    return scoped_log(new_log(tmp_path_factory.mktemp("scoped")))


def _leaked(text: str) -> list[str]:
    return [s for s in SECRETS if s.lower() in text.lower()]


@pytest.mark.parametrize("command", WHOLE_LOG)
def test_a_read_of_the_whole_log_is_refused_to_a_grant_of_some_scopes(
    db: str | Path, command: str
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
    every = (f"--scope={s}" for s in ("a", "b", "default"))  # every declared, the implicit
    assert "POLICY_DENIED" not in writegate(db, *every, *args, code=code).stderr


@pytest.fixture
def switched(tmp_path: Path) -> Path:
    config = tmp_path / "writegate.toml"
    config.write_text('[scopes]\ndisabled = ["b"]\n')
    return config


@pytest.mark.parametrize("command", ["show node", "audit agent", "log", "report"])
def test_a_scope_switched_off_in_the_configuration_refuses_the_whole_log_reads(
    db: str | Path, switched: Path, command: str
) -> None:
    refused = writegate(db, "--config", str(switched), *WHOLE_LOG[command], code=1)
    assert refused.stderr.startswith(f"error: POLICY_DENIED: {command} reads the whole log")
    assert refused.stderr.endswith("and [scopes] disabled b leave it fewer\n")


def test_a_scope_switched_off_in_the_configuration_is_out_of_every_graph_read(
    db: str | Path, switched: Path
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


READS = (  # each graph read, by the node it starts from (None: the whole graph)
    lambda node: ["search", "said", "--format", "json"],
    lambda node: ["query", f"{node} said", "--format", "json"],
    lambda node: ["open", node, "--format", "json"],
    lambda node: ["neighbors", node, "--depth", "2", "--format", "json"],
    lambda node: ["export", "mermaid"],
    lambda node: ["export", "mermaid", "--around", node],
)


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(graph=GRAPHS)
def test_every_cli_read_of_a_generated_graph_keeps_inside_a_generated_grant(
    new_log: NewLog,
    tmp_path_factory: pytest.TempPathFactory,
    graph: tuple[Any, ...],
) -> None:
    scopes, links, grant, asked = graph
    assume(grant)  # no --scope at all: the operator, who sees everything
    db = new_log(tmp_path_factory.mktemp("generated"))
    nodes = [(scope, n) for n, scope in enumerate(scopes)]
    with Gate.open(db, default_actor=AGENT) as gate:
        assert gate.publish_schema(SCHEMA).status == "published"
        for scope, n in nodes:
            write(gate, scope, n)
        for x, y in links:
            if x != y and max(x, y) < len(nodes):
                link(gate, nodes[x], nodes[y])
    hidden = [word(s, n) for s, n in nodes if s not in grant]
    shown = [word(s, n) for s, n in nodes if s in grant]
    scope, n = nodes[asked % len(nodes)]
    start = f"{LABELS[scope]}:name={word(scope, n)}"
    granted = [f"--scope={s}" for s in sorted(grant)]
    runner = CliRunner()
    for read in READS:
        done = runner.invoke(cli, ["--db", str(db), *granted, *read(start)])
        assert [w for w in hidden if w in done.stdout] == [], (read(start), done.stdout)
    found = runner.invoke(cli, ["--db", str(db), *granted, "search", "said", "--format", "json"])
    assert sorted(n["merge_keys"]["name"] for n in json.loads(found.stdout)["nodes"]) == sorted(
        shown
    )
    for args in (("log",), ("report",), ("audit", "node", start)):
        refused = runner.invoke(cli, ["--db", str(db), *granted, *args])
        assert refused.exit_code == 1
        assert "POLICY_DENIED" in refused.stderr
        assert refused.stdout == ""
