"""Every projection records the log it follows: one of another log, or of this log rewritten
under it, is refused by ``replay`` and named by ``status``; ``verify`` of a backup names the
live log's projections as another log's instead of failing them. For each kind: the JSONL
snapshot, PROV-O, and the graph store on a live Bolt server."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.cli.conftest import writegate
from tests.conftest import SEED_SCHEMA, person
from tests.projections.conftest import wipe
from tests.projections.history import build_history
from writegate.gate import Gate
from writegate.projections.graph import BoltTarget

KINDS = ["jsonl", "prov", "graph"]


def configure(tmp_path: Path, kind: str, bolt: BoltTarget | None) -> tuple[Path, dict[str, str]]:
    """A writegate.toml with one projection, ``snap``, of ``kind``."""
    toml = tmp_path / "p.toml"
    if kind == "graph":
        assert bolt is not None
        toml.write_text(
            f'[projections.snap]\nkind = "graph"\nuri = "{bolt.uri}"\nuser = "{bolt.user}"\n'
            f'database = "{bolt.database}"\ndialect = "{bolt.dialect}"\n'
        )
        return toml, {"WRITEGATE_PROJECTIONS__SNAP__PASSWORD": bolt.password}
    toml.write_text(f'[projections.snap]\nkind = "{kind}"\npath = "{tmp_path / "snap.out"}"\n')
    return toml, {}


@pytest.fixture
def target(request: pytest.FixtureRequest, kind: str) -> BoltTarget | None:
    """The live Bolt server (ArcadeDB), emptied, for the graph kind (nothing for the file
    kinds)."""
    if kind != "graph":
        return None
    server: BoltTarget = request.getfixturevalue("arcadedb")
    wipe(server)
    return server


def two_logs(tmp_path: Path) -> tuple[Path, Path]:
    """``a.db`` with the projection history, ``b.db`` with another history of its own."""
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    with Gate.open(a) as gate:
        gate.publish_schema(SEED_SCHEMA)
        build_history(gate)
    with Gate.open(b) as gate:
        gate.publish_schema(SEED_SCHEMA)
        for name in ("Dora", "Eve", "Finn"):
            assert gate.write_node(**person(name)).status == "written"
    return a, b


def output(tmp_path: Path, kind: str) -> bytes | None:
    path = tmp_path / "snap.out"
    return path.read_bytes() if kind != "graph" else None


@pytest.mark.parametrize("kind", KINDS)
def test_a_projection_of_another_log_is_refused_naming_both(
    tmp_path: Path, kind: str, target: BoltTarget | None
) -> None:
    toml, env = configure(tmp_path, kind, target)
    a, b = two_logs(tmp_path)
    writegate(a, "--config", str(toml), "replay", "snap", env=env)
    before = output(tmp_path, kind)

    refused = writegate(b, "--config", str(toml), "replay", "snap", code=1, env=env)
    assert refused.stderr.count("\n") == 1, refused.stderr
    assert str(a) in refused.stderr
    assert str(b) in refused.stderr
    assert "another log" in refused.stderr
    assert output(tmp_path, kind) == before  # nothing of b.db landed in it

    status = writegate(b, "--config", str(toml), "status", "--json", code=1, env=env)
    assert "another log" in status.stdout
    verified = writegate(b, "--config", str(toml), "verify", env=env)
    assert "ok    projection checkpoints: no projection to check" in verified.stdout
    assert f"skip  projection of another log: snap follows another log ({a}" in verified.stdout

    # a rebuild is what makes it b.db's; then it follows b.db and refuses a.db
    writegate(b, "--config", str(toml), "rebuild", "snap", env=env)
    writegate(b, "--config", str(toml), "replay", "snap", env=env)
    writegate(a, "--config", str(toml), "replay", "snap", code=1, env=env)


@pytest.mark.parametrize("kind", KINDS)
def test_verify_of_a_backup_names_the_live_projections_as_another_logs(
    tmp_path: Path, kind: str, target: BoltTarget | None
) -> None:
    toml, env = configure(tmp_path, kind, target)
    live = tmp_path / "live.db"
    with Gate.open(live) as gate:
        gate.publish_schema(SEED_SCHEMA)
        build_history(gate)
    backup = tmp_path / "backup.db"
    writegate(live, "backup", str(backup))
    with Gate.open(live) as gate:
        assert gate.write_node(**person("Zed")).status == "written"
    writegate(live, "--config", str(toml), "replay", "snap", env=env)

    verified = writegate(backup, "--config", str(toml), "verify", env=env)
    assert "past the head of" in verified.stdout, verified.stdout
    assert "skip  projection of another log: snap is at seq" in verified.stdout
    assert "ahead of the log head" not in verified.stdout + verified.stderr


@pytest.mark.parametrize("kind", KINDS)
def test_a_log_rewritten_under_a_projection_is_refused(
    tmp_path: Path, kind: str, target: BoltTarget | None
) -> None:
    """The same first events, then another history: the projection's checkpoint event is not
    the log's any more (a log restored from a copy and written to again)."""
    toml, env = configure(tmp_path, kind, target)
    log = tmp_path / "log.db"
    with Gate.open(log) as gate:
        gate.publish_schema(SEED_SCHEMA)
    copy = tmp_path / "copy.db"
    shutil.copyfile(log, copy)
    with Gate.open(log) as gate:
        assert gate.write_node(**person("Ada")).status == "written"
    writegate(log, "--config", str(toml), "replay", "snap", env=env)
    shutil.copyfile(copy, log)  # the log as it was, then written to differently
    with Gate.open(log) as gate:
        assert gate.write_node(**person("Bea")).status == "written"

    refused = writegate(log, "--config", str(toml), "replay", "snap", code=1, env=env)
    assert "follows another history" in refused.stderr
    assert refused.stderr.count("\n") == 1


@pytest.mark.parametrize("kind", ["jsonl", "prov"])
def test_a_checkpoint_from_before_marks_is_adopted_by_the_next_replay_and_said_once(
    tmp_path: Path, kind: str
) -> None:
    toml, _ = configure(tmp_path, kind, None)
    a, _b = two_logs(tmp_path)
    writegate(a, "--config", str(toml), "replay", "snap")
    record = tmp_path / "snap.out.checkpoint.json"
    older = json.loads(record.read_text())
    older.pop("log", None)  # as an older version wrote it
    older.pop("length", None)
    record.write_text(json.dumps(older))

    adopted = writegate(a, "--config", str(toml), "replay", "snap")
    assert f"records no log (written before projections recorded theirs); it now records {a}" in (
        adopted.stdout
    )
    assert json.loads(record.read_text())["log"]["log"] == str(a)
    again = writegate(a, "--config", str(toml), "replay", "snap")
    assert "records no log" not in again.stdout + again.stderr


def test_follow_refuses_another_logs_projection_before_it_starts(tmp_path: Path) -> None:
    toml, _ = configure(tmp_path, "jsonl", None)
    a, b = two_logs(tmp_path)
    writegate(a, "--config", str(toml), "replay", "snap")
    before = output(tmp_path, "jsonl")
    refused = writegate(b, "--config", str(toml), "follow", code=1)
    assert refused.stderr.splitlines()[-1].startswith("error: snap follows another log")
    assert "Traceback" not in refused.stderr
    assert output(tmp_path, "jsonl") == before
