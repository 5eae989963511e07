"""``writegate verify`` catches every way history can be rewritten, and anchors it."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

from tests.console import run as writegate_run
from writegate.eventlog.tables import APPEND_ONLY_TRIGGERS


def verify(db: Path, *args: str, config: Path | None = None) -> subprocess.CompletedProcess[str]:
    options = ["--config", str(config)] if config else []
    return writegate_run(["--db", str(db), *options, "verify", *args])


def tamper(db: Path, sql: str, *params: object) -> None:
    conn = sqlite3.connect(db)
    for trigger in APPEND_ONLY_TRIGGERS:
        conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    conn.execute(sql, params)
    conn.commit()
    conn.close()


def test_a_clean_log_verifies_and_anchors(audited: Path) -> None:
    clean = verify(audited, "--anchor")
    assert clean.returncode == 0, clean.stderr
    lines = clean.stdout.splitlines()
    assert [line.split(":")[0] for line in lines[:4]] == [
        "ok    hash chain",
        "ok    append-only triggers",
        "ok    history index",
        "ok    state read model",
    ]
    anchor = lines[-1]
    assert anchor.startswith("14:")
    assert verify(audited, "--expect-head", anchor).returncode == 0


def test_an_altered_event_is_named(audited: Path) -> None:
    anchor = verify(audited, "--anchor").stdout.splitlines()[-1]
    tamper(audited, "UPDATE events SET payload = replace(payload, '31', '32') WHERE seq = 7")
    out = verify(audited)
    assert out.returncode == 1
    assert out.stderr.startswith("error: hash chain:")
    assert "seq 7" in out.stderr
    later = verify(audited, "--expect-head", anchor)
    assert later.returncode == 1


def test_a_deleted_event_is_named(audited: Path) -> None:
    tamper(audited, "DELETE FROM events WHERE seq = 5")
    out = verify(audited)
    assert out.returncode == 1
    assert "seq 5 is missing" in out.stderr
    assert "FAIL  append-only triggers" in out.stdout


def test_a_hand_edited_state_table_is_caught(audited: Path) -> None:
    conn = sqlite3.connect(audited)
    conn.execute("UPDATE state_nodes SET properties = '{\"age\":99}' WHERE label = 'Person'")
    conn.commit()
    conn.close()
    out = verify(audited)
    assert out.returncode == 1
    assert out.stderr.strip() == (
        "error: state read model: differs from a replay of the log (edited outside the gate?)"
    )


def test_a_projection_ahead_of_the_log_is_caught(audited: Path, tmp_path: Path) -> None:
    toml = tmp_path / "writegate.toml"
    toml.write_text(f'[projections.snapshot]\nkind = "jsonl"\npath = "{tmp_path / "g.jsonl"}"\n')
    replayed = writegate_run(["--db", str(audited), "--config", str(toml), "replay", "snapshot"])
    assert replayed.returncode == 0, replayed.stderr
    assert verify(audited, config=toml).returncode == 0
    (tmp_path / "g.jsonl.checkpoint.json").write_text('{"checkpoint": 99}')
    out = verify(audited, config=toml)
    assert out.returncode == 1
    assert out.stderr.strip() == (
        "error: projection checkpoints: snapshot is at 99, ahead of the log head 14"
    )


def test_an_anchor_that_does_not_match_fails(audited: Path) -> None:
    out = verify(audited, "--expect-head", "3:" + "0" * 64)
    assert out.returncode == 1
    assert out.stderr.startswith("error: anchor: event 3 has hash")
    bad = verify(audited, "--expect-head", "three")
    assert bad.returncode == 2


def test_an_entry_added_to_the_history_index_is_named(audited: Path) -> None:
    """No trigger stops an INSERT into ``event_streams``, the index a node's history is read
    through: a forged entry named another node's event as Ada's, and verify passed."""
    conn = sqlite3.connect(audited)
    conn.execute("INSERT INTO event_streams VALUES (?, ?, ?)", ('node:Person{"name":"Ada"}', 99, 3))
    conn.commit()
    conn.close()
    out = verify(audited)
    assert out.returncode == 1
    assert "FAIL  history index" in out.stdout
    assert "seq 3" in out.stderr


def test_an_entry_moved_in_the_history_index_is_named(audited: Path) -> None:
    tamper(audited, "UPDATE event_streams SET stream = 'node:Person{\"name\":\"Zed\"}' WHERE seq = 2")
    out = verify(audited)
    assert out.returncode == 1
    assert "FAIL  history index" in out.stdout


def test_a_log_whose_format_was_unset_is_refused_never_repaired(audited: Path) -> None:
    """With ``user_version`` set to 0 the next writer made the log's tables again, and with
    them the append-only triggers someone had dropped: verify then passed."""
    conn = sqlite3.connect(audited)
    conn.execute("DROP TRIGGER events_no_delete")
    conn.execute("PRAGMA user_version = 0")
    conn.commit()
    conn.close()
    wrote = writegate_run(["--db", str(audited), "write", "node", "Person:name=Zed",
                           "--source", "s", "--method", "api"])  # fmt: skip
    assert wrote.returncode == 1
    assert "no log format (PRAGMA user_version 0)" in wrote.stderr
    assert "no log format (PRAGMA user_version 0)" in verify(audited).stderr
    conn = sqlite3.connect(audited)
    dropped = conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'events_no_delete'")
    assert dropped.fetchone() == (0,)
    conn.close()
