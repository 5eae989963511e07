"""A projection file cut short (a crash, a copy, a hand) is never left as it is or extended:
``verify`` and ``status`` name it; ``replay`` renders the JSONL snapshot again from its model
(the file is a rendering) and refuses the PROV-O file, which is the store itself, until a
``rebuild`` writes it again; ``export prov`` of a torn file is one line, not a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import write_history, writegate


@pytest.fixture
def replayed(tmp_path: Path) -> tuple[Path, Path]:
    """A log, and a configuration whose ``snapshot`` (JSONL) and ``provenance`` (PROV-O)
    are replayed to its head."""
    db = write_history(tmp_path / "log.db")
    toml = tmp_path / "writegate.toml"
    toml.write_text(
        f'[projections.snapshot]\nkind = "jsonl"\npath = "{tmp_path / "graph.jsonl"}"\n\n'
        f'[projections.provenance]\nkind = "prov"\npath = "{tmp_path / "provenance.nt"}"\n'
    )
    writegate(db, "--config", str(toml), "replay", "snapshot")
    writegate(db, "--config", str(toml), "replay", "provenance")
    return db, toml


def cut(path: Path, keep: int) -> bytes:
    """Cut ``path`` to ``keep`` bytes less than half way through a line; its whole bytes."""
    whole = path.read_bytes()
    with open(path, "rb+") as handle:
        handle.truncate(keep)
    assert not path.read_bytes().endswith(b"\n")
    return whole


def test_a_torn_jsonl_snapshot_is_reported_then_rendered_again(
    tmp_path: Path, replayed: tuple[Path, Path]
) -> None:
    db, toml = replayed
    snapshot = tmp_path / "graph.jsonl"
    whole = cut(snapshot, len(snapshot.read_bytes()) - 40)

    verified = writegate(db, "--config", str(toml), "verify", code=1)
    assert f"FAIL  projection files: snapshot: {snapshot} is" in verified.stdout
    assert verified.stderr.startswith("error: projection files: snapshot:")
    status = writegate(db, "--config", str(toml), "status", code=1)
    assert "damaged" in status.stdout

    repaired = writegate(db, "--config", str(toml), "replay", "snapshot")
    assert "cut short; rendered again from its model" in repaired.stdout + repaired.stderr
    assert snapshot.read_bytes() == whole
    writegate(db, "--config", str(toml), "verify")


def test_a_torn_prov_file_is_refused_never_extended_and_rebuilt(
    tmp_path: Path, replayed: tuple[Path, Path]
) -> None:
    db, toml = replayed
    triples = tmp_path / "provenance.nt"
    whole = cut(triples, len(triples.read_bytes()) - 25)
    torn = triples.read_bytes()

    verified = writegate(db, "--config", str(toml), "verify", code=1)
    assert f"FAIL  projection files: provenance: {triples} is" in verified.stdout
    exported = writegate(db, "--config", str(toml), "export", "prov", "provenance", code=1)
    assert exported.stderr.count("\n") == 1, exported.stderr
    assert "cut short" in exported.stderr

    refused = writegate(db, "--config", str(toml), "replay", "provenance", code=1)
    assert refused.stderr.count("\n") == 1, refused.stderr
    assert "cut short; rebuild it from the log" in refused.stderr
    assert triples.read_bytes() == torn  # not extended (no NUL bytes), not appended to

    writegate(db, "--config", str(toml), "rebuild", "provenance")
    assert triples.read_bytes() == whole
    writegate(db, "--config", str(toml), "verify")
    writegate(db, "--config", str(toml), "export", "prov", "provenance")
