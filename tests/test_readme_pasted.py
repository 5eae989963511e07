"""The guides' projection configuration, PostgreSQL, review and merge commands, pasted.

Only what cannot be the same here is put in: the database address (the test's own
PostgreSQL) and the Bolt port (a free one, so nothing answers on it).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.readme import blocks, commands, section
from tests.server.harness import WRITEGATE, free_port

HANG = 20  # seconds: only catches a command waiting out the driver's retries (30 s)
README_DSN = "postgresql://writegate@127.0.0.1:5432/memory"
PROJECTIONS = "## Projections: the log replayed into stores"


def pasted(script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """A README block pasted into bash as it stands (stopping at its first failing line),
    with this checkout's ``writegate`` on the PATH."""
    path = f"{Path(WRITEGATE).parent}:/usr/bin:/bin"
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script], cwd=cwd, env={"PATH": path},
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def run(*words: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [WRITEGATE, *words], cwd=cwd, capture_output=True, text=True, timeout=HANG, check=False
    )


@pytest.fixture
def pasted_config(tmp_path: Path) -> Path:
    """The projections block, as the README shows it, in ``writegate.toml``."""
    toml = blocks(section(PROJECTIONS), "toml")[0]
    unused = str(free_port())
    (tmp_path / "writegate.toml").write_text(toml.replace("7687", unused))
    write = ["--db", "memory.db", "write", "node", "Person", "-k", "name=Ada", "-p", "age=36"]
    assert run("--db", "memory.db", "init", "--schema", str(ROOT / "fixtures" / "schema.yaml"),
               cwd=tmp_path).returncode == 0  # fmt: skip
    done = run(*write, "--source", "hr.csv", "--method", "parsed", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return tmp_path


def test_the_projections_block_works_as_pasted(pasted_config: Path) -> None:
    for name in ("snapshot", "provenance"):
        done = run("--db", "memory.db", "replay", name, cwd=pasted_config)
        assert done.returncode == 0, done.stderr
    assert '"name":"Ada"' in (pasted_config / "var" / "graph.jsonl").read_text()
    provenance = (pasted_config / "var" / "provenance.nt").read_text()
    assert "<http://www.w3.org/ns/prov#Activity>" in provenance
    status = run("--db", "memory.db", "status", cwd=pasted_config)
    assert status.returncode == 1  # the graph projection's server is not running
    assert "unreachable" in status.stdout


def test_the_graph_registry_snippet_fails_a_write_at_once_when_unreachable(
    pasted_config: Path,
) -> None:
    [registry] = blocks(section(PROJECTIONS).split("**Graph-backed registry.**", 1)[1], "toml")
    config = pasted_config / "writegate.toml"
    config.write_text(config.read_text() + "\n" + registry)
    args = ["--db", "memory.db", "write", "node", "Person:name=Eve"]
    done = run(*args, "--source", "s", "--method", "llm", cwd=pasted_config)
    assert done.returncode == 1
    assert done.stderr.startswith("error: SCHEMA_SOURCE_UNAVAILABLE: graph:bolt://127.0.0.1:")
    assert done.stderr.count("\n") == 1


def test_the_postgres_commands_work_as_pasted(pg_dsn: str) -> None:
    pasted = commands(section("## The log on PostgreSQL"))
    assert [words[3] for words in pasted] == ["init", "write", "verify"]
    for words in pasted:
        assert words[1:3] == ["--db", README_DSN]
        done = run("--db", pg_dsn, *words[3:], cwd=ROOT)
        assert done.returncode == 0, (words, done.stderr)
    assert done.stdout.splitlines()[-1] == "verified up to seq 2"  # the schema, then Ada
    assert "ok    hash chain" in done.stdout


def test_the_review_commands_work_as_pasted(tmp_path: Path) -> None:
    pasted = commands(section("### The review lane"))
    assert [words[3:5] for words in pasted] == [
        ["review", "list"],
        ["review", "show"],
        ["review", "approve"],
        ["review", "reject"],
    ]
    schema = tmp_path / "schema.yaml"
    schema.write_text(
        "nodes:\n  Person:\n    merge_keys: [name]\n    review_below: 0.6\n"
        "    properties: {name: {type: string}}\n"
    )
    assert run("--db", "memory.db", "init", "--schema", str(schema), cwd=tmp_path).returncode == 0
    proposals = []
    for name in ("Ada", "Eve"):
        held = run("--db", "memory.db", "--as", "chat-agent", "write", "node",  # not the reviewer
                   f"Person:name={name}", "--source", "chat", "--method", "llm", "--format",
                   "json", cwd=tmp_path)  # fmt: skip
        proposals.append(json.loads(held.stdout)["proposal"])
    for words in pasted:
        args = [proposals[1] if w == "PROPOSAL" and words[4] == "reject" else w for w in words]
        args = [proposals[0] if w == "PROPOSAL" else w for w in args]
        done = run(*args[1:], cwd=tmp_path)
        assert done.returncode == 0, (words, done.stderr)
    listed = run("--db", "memory.db", "review", "list", "--all", "--format", "json", cwd=tmp_path)
    statuses = {p["proposal"]: p["status"] for p in json.loads(listed.stdout)["proposals"]}
    assert statuses == {proposals[0]: "approved", proposals[1]: "rejected"}


def test_the_merge_commands_work_as_pasted(tmp_path: Path) -> None:
    merged, unmerged = commands(section("### Merging and unmerging duplicates"))
    assert (merged[3], unmerged[3]) == ("merge", "unmerge")
    schema = tmp_path / "schema.yaml"
    schema.write_text("nodes:\n  Person:\n    merge_keys: [name]\n")
    assert run("--db", "memory.db", "init", "--schema", str(schema), cwd=tmp_path).returncode == 0
    for name in ("Alan Turing", "alan turing"):
        wrote = run("--db", "memory.db", "write", "node", f"Person:name={name}",
                    "-p", "city=London", "--source", "hr", "--method", "api", cwd=tmp_path)  # fmt: skip
        assert wrote.returncode == 0, wrote.stderr
    done = run(*merged[1:], "--format", "json", cwd=tmp_path)  # a summary by default
    assert done.returncode == 0, done.stderr
    merge_id = json.loads(done.stdout)["merge"]
    undo = [merge_id if w == "MERGE" else w for w in unmerged[1:]]
    undone = run(*undo, "--format", "json", cwd=tmp_path)
    assert undone.returncode == 0, undone.stderr
    assert json.loads(undone.stdout)["restored"] == 'Person{"name":"alan turing"}'
    again = run(*[merge_id if w == "MERGE" else w for w in unmerged[1:]], cwd=tmp_path)
    assert again.returncode != 0
    assert "MERGE_NOT_FOUND" in again.stderr + again.stdout


def test_the_asking_commands_work_as_pasted(tmp_path: Path) -> None:
    """The README's first log, then its questions pasted into bash as they stand."""
    [init] = [c for c in commands(section("## First log, first agent")) if "init" in c]
    (tmp_path / "fixtures").symlink_to(ROOT / "fixtures")
    assert run(*init[1:], cwd=tmp_path).returncode == 0
    script, scoped = blocks(section("## Asking the graph"), "sh")
    done = pasted(script, tmp_path)
    assert done.returncode == 0, done.stderr
    said = done.stdout
    assert "1 triplet" in said
    assert "1 observation" in said
    assert "moved the weights of 0 nodes and 1 relationship" in said
    assert "cites" in said  # the trail names the observation the write cited
    assert "Lisbon" in said
    done = pasted(scoped, tmp_path)
    assert done.returncode == 0, done.stderr
    answer = done.stdout[done.stdout.index("\nwg_") :]  # after the token: the search
    assert "T-1" in answer  # asked as an agent granted ops: the ticket,
    assert "Ada" not in answer  # not who works it
    assert "120000" not in answer
    assert "withheld (outside this grant): 1 relationship into hr" in answer
    refused = run("--db", "team.db", "token", "create", "eve", "--role", "writer",
                  "--scope", "hrr", cwd=tmp_path)  # fmt: skip
    assert refused.returncode == 2
    assert refused.stderr == (
        "error: no such scope: hrr; the schema declares eng, hr, ops (and the implicit 'default')\n"
    )


def test_the_forgetting_commands_work_as_pasted(tmp_path: Path) -> None:
    """The README's forgetting, pasted into bash as it stands: after it, no byte of Ada is
    left in the log's files, and the chain verifies with her event erased."""
    [script] = blocks(section("## Forgetting a person"), "sh")
    (tmp_path / "fixtures").symlink_to(ROOT / "fixtures")
    done = pasted(script, tmp_path)
    assert done.returncode == 0, done.stderr
    assert '"email":"ada@example.org"' in done.stdout  # the export, before
    assert "1 erased" in done.stdout
    assert done.stdout.rstrip().endswith("verified up to seq 3")
    held = b"".join(f.read_bytes() for f in tmp_path.glob("people.db*"))
    assert b"ada@example.org" not in held


def test_the_retraction_commands_work_as_pasted(tmp_path: Path) -> None:
    """The README's retraction, pasted into bash as it stands: the report, the retraction,
    verify, and the undoing."""
    [script] = blocks(section("## Take back a source"), "sh")
    (tmp_path / "fixtures").symlink_to(ROOT / "fixtures")
    done = pasted(script, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "would take back 2 facts: 0 reverted, 1 retracted, 1 kept" in done.stdout
    assert "unretracted r-" in done.stdout
    verified = run("--db", "claims.db", "verify", cwd=tmp_path)
    assert verified.returncode == 0, verified.stderr
