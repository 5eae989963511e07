"""Every file a projection or an export writes is owner-only (0600), whatever the umask lets
through: they hold what agents wrote, as the log does (``projections.files``)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.cli.conftest import write_history, writegate


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
