"""``status``, ``replay``, ``rebuild`` as an operator runs them, with writegate.toml."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.conftest import SEED_SCHEMA
from tests.console import run as writegate_run
from tests.projections.history import T0, build_history
from writegate.gate import Gate
from writegate.projections.graph import BoltTarget


def run(
    db: Path, toml: Path, *args: str, env: dict[str, str] | None = None, ok: bool = True
) -> subprocess.CompletedProcess[str]:
    proc = writegate_run(["--db", str(db), "--config", str(toml), *args], env=env)
    if ok:
        assert proc.returncode == 0, proc.stderr
    return proc


def setup(tmp_path: Path, db: Path, bolt: BoltTarget) -> tuple[Path, dict[str, str]]:
    with Gate.open(db) as gate:
        gate.publish_schema(SEED_SCHEMA)
        build_history(gate)
    toml = tmp_path / "writegate.toml"
    toml.write_text(
        f'[projections.graph]\nkind = "graph"\nuri = "{bolt.uri}"\nuser = "{bolt.user}"\n'
        f'database = "{bolt.database}"\ndialect = "{bolt.dialect}"\n\n'
        f'[projections.snapshot]\nkind = "jsonl"\npath = "{tmp_path / "graph.jsonl"}"\n\n'
        f'[projections.provenance]\nkind = "prov"\npath = "{tmp_path / "prov.nt"}"\n'
    )
    return toml, {"WRITEGATE_PROJECTIONS__GRAPH__PASSWORD": bolt.password}


def test_status_replay_rebuild(tmp_path: Path, db_path: Path, bolt: BoltTarget) -> None:
    toml, env = setup(tmp_path, db_path, bolt)
    outputs = []
    before = run(db_path, toml, "status", env=env)
    outputs.append(before)
    assert "snapshot" in before.stdout
    assert "provenance" in before.stdout
    for name in ("graph", "snapshot", "provenance"):
        outputs.append(run(db_path, toml, "replay", name, env=env))
    after = run(db_path, toml, "status", "--json", env=env)
    outputs.append(after)
    rows = [json.loads(line) for line in after.stdout.splitlines()]
    assert [r["name"] for r in rows] == ["state", "graph", "snapshot", "provenance"]
    assert {r["lag"] for r in rows} == {0}
    assert {r["checkpoint"] for r in rows} == {rows[0]["head"]}

    records = [json.loads(line) for line in (tmp_path / "graph.jsonl").read_text().splitlines()]
    names = {r["name"] for r in records if r["type"] == "node"}
    assert {"Alice", "Bob", "Carol", "Initech", "Widget"} <= names

    as_of = (T0.replace(minute=4, second=30)).isoformat()
    outputs.append(run(db_path, toml, "replay", "snapshot", "--as-of", as_of, env=env))
    early = (tmp_path / "graph.jsonl").read_text()
    assert "Carol" in early
    assert "Widget" not in early

    rebuilt = run(db_path, toml, "rebuild", "provenance", env=env)
    outputs.append(rebuilt)
    assert "(reset first)" in rebuilt.stdout
    outputs.append(run(db_path, toml, "rebuild", "graph", "--regate", env=env))
    turtle = tmp_path / "prov.ttl"
    outputs.append(run(db_path, toml, "export", "prov", "provenance", "-o", str(turtle), env=env))
    assert "prov:wasGeneratedBy" in turtle.read_text()
    assert all(bolt.password not in o.stdout + o.stderr for o in outputs)


def test_operator_mistakes_are_one_line_errors(
    tmp_path: Path, db_path: Path, bolt: BoltTarget
) -> None:
    toml, env = setup(tmp_path, db_path, bolt)
    unknown = run(db_path, toml, "replay", "nope", env=env, ok=False)
    assert unknown.returncode == 2
    assert unknown.stderr.startswith("error: no projection named 'nope'")
    both = run(
        db_path,
        toml,
        "replay",
        "snapshot",
        "--to-seq",
        "3",
        "--as-of",
        "2032-01-01",
        env=env,
        ok=False,
    )
    assert both.returncode == 2
    bad = tmp_path / "bad.toml"
    bad.write_text('[projections.x]\nkind = "graph"\n')  # no uri
    invalid = run(db_path, bad, "status", ok=False)
    assert invalid.returncode == 2
    assert invalid.stderr.startswith("error: invalid configuration")
    assert invalid.stderr.count("\n") == 1
    dead = tmp_path / "dead.toml"
    dead.write_text(
        '[projections.g]\nkind = "graph"\nuri = "bolt://127.0.0.1:9"\nretry_seconds = 0.5\n'
    )
    down = run(db_path, dead, "replay", "g", ok=False)
    assert down.returncode == 1
    assert "graph server bolt://127.0.0.1:9 unavailable" in down.stderr


def test_the_graph_registry_as_the_cli_schema_source(
    tmp_path: Path, db_path: Path, bolt: BoltTarget
) -> None:
    toml = tmp_path / "writegate.toml"
    toml.write_text(
        f'[projections.graph]\nkind = "graph"\nuri = "{bolt.uri}"\nuser = "{bolt.user}"\n'
        f'database = "{bolt.database}"\ndialect = "{bolt.dialect}"\n\n'
        '[schema_source]\nsource = "graph"\nprojection = "graph"\n'
    )
    env = {"WRITEGATE_PROJECTIONS__GRAPH__PASSWORD": bolt.password}
    run(db_path, toml, "init", env=env)
    pushed = run(db_path, toml, "schema", "push-graph", str(SEED_SCHEMA), env=env)
    assert "3 labels, 2 relationship types" in pushed.stdout
    written = run(
        db_path,
        toml,
        "write",
        "node",
        "person:name=Ada",
        "--source",
        "cli",
        "--method",
        "manual",
        "--format",
        "json",
        env=env,
    )
    result = json.loads(written.stdout)
    assert (result["label"], result["remapped_from"]) == ("Person", ":person")
    refused = run(
        db_path,
        toml,
        "write",
        "relationship",
        "DIRECTED",
        "Person:name=Ada",
        "Person:name=Ada",
        "--source",
        "cli",
        "--method",
        "manual",
        env=env,
        ok=False,
    )
    assert refused.returncode == 1
    assert refused.stderr.startswith("error: SCHEMA_UNKNOWN_LABEL")
