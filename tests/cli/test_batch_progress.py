"""A long ``write batch`` shows its progress in a terminal (issue 42): a bar of the items
written, on stderr; piped, stderr holds nothing but errors."""

from __future__ import annotations

import json
import os
import pty
import subprocess
from pathlib import Path

from tests.cli.conftest import writegate
from tests.conftest import FIXTURES
from tests.server.harness import WRITEGATE

ITEMS = 1_200


def _batch(tmp_path: Path) -> tuple[Path, Path]:
    db = tmp_path / "log.db"
    writegate(db, "init", "--schema", str(FIXTURES / "schema.yaml"))
    batch = tmp_path / "people.jsonl"
    batch.write_text(
        "".join(
            json.dumps(
                {
                    "op": "write_node",
                    "label": "Organization",
                    "merge_keys": {"name": f"Company {n}"},
                    "source": "registry-api",
                    "extraction_method": "api",
                }
            )
            + "\n"
            for n in range(ITEMS)
        )
    )
    return db, batch


def test_a_long_batch_shows_a_bar_of_items_in_a_terminal(tmp_path: Path) -> None:
    db, batch = _batch(tmp_path)
    leader, follower = pty.openpty()
    done = subprocess.run(
        [WRITEGATE, "--db", str(db), "write", "batch", str(batch)],
        stdout=subprocess.PIPE,
        stderr=follower,
        timeout=300,
        check=False,
        env={**os.environ, "COLUMNS": "100"},
    )
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal's other end is closed: all of it was read
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    assert done.returncode == 0, shown
    assert f"{ITEMS:,} items" in done.stdout.decode()
    assert f"{ITEMS}/{ITEMS}" in shown.decode() or f"{ITEMS:,}/{ITEMS:,}" in shown.decode()
    assert "items/s" in shown.decode()


def test_a_piped_batch_prints_no_bar(tmp_path: Path) -> None:
    db, batch = _batch(tmp_path)
    done = writegate(db, "write", "batch", str(batch))
    assert done.stderr == ""
