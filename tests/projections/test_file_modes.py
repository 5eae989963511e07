"""Every file a projection or an export writes is owner-only (0600), whatever the umask lets
through: they hold what agents wrote, as the log does (``projections.files``)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.cli.conftest import write_history, writegate, writegate_process


def modes(folder: Path) -> dict[str, str]:
    return {p.name: oct(stat.S_IMODE(p.stat().st_mode)) for p in sorted(folder.iterdir())}


@pytest.mark.usefixtures("open_umask")
def test_every_file_projections_and_exports_write_is_owner_only(tmp_path: Path) -> None:
    db = write_history(tmp_path / "log.db")
    out = tmp_path / "out"
    out.mkdir()
    (out / "provenance.nt").write_bytes(b"")  # as an older version left it: 0644, empty
    os.chmod(out / "provenance.nt", 0o644)
    toml = tmp_path / "writegate.toml"
    toml.write_text(
        f'[projections.snapshot]\nkind = "jsonl"\npath = "{out / "graph.jsonl"}"\n\n'
        f'[projections.provenance]\nkind = "prov"\npath = "{out / "provenance.nt"}"\n\n'
        f'[projections.state]\nkind = "state"\npath = "{out / "state.db"}"\n'
    )
    for command in ("replay", "rebuild"):
        for name in ("snapshot", "provenance", "state"):
            writegate(db, "--config", str(toml), command, name)
        found = modes(out)
        assert set(found.values()) == {"0o600"}, (command, found)
    ttl = out / "provenance.ttl"
    writegate(db, "--config", str(toml), "export", "prov", "provenance", "-o", str(ttl))
    writegate(db, "export", "dot", "-o", str(out / "graph.dot"))
    found = modes(out)
    assert {"graph.jsonl", "provenance.nt.declared", "state.db", "provenance.ttl"} <= set(found)
    assert set(found.values()) == {"0o600"}, found


def test_a_pipe_named_as_the_log_is_refused_never_opened_or_narrowed(tmp_path: Path) -> None:
    """``--db /dev/null init`` run as root narrowed /dev/null to 0600 (and a pipe's open for
    writing waited for a reader forever): what is not a regular file is the system's."""
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    os.chmod(pipe, 0o644)
    done = writegate_process(pipe, "init", code=1)
    assert done.stderr.strip() == f"error: {pipe}: not a file (a device, a pipe or a socket)"
    writes = ("write", "node", "Person:name=Ada", "--source", "s", "--method", "api")
    assert str(pipe) in writegate_process(pipe, *writes, code=1).stderr
    assert stat.S_IMODE(pipe.stat().st_mode) == 0o644
    assert stat.S_ISFIFO(pipe.stat().st_mode)
