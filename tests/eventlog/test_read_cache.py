"""A read-only log's connections keep a larger page cache than SQLite's default; a writer's
connections keep the default (its memory is the server's); a read of the whole log (verify)
keeps the default meanwhile, its pages read once."""

from __future__ import annotations

from pathlib import Path

from writegate.eventlog import EventLog
from writegate.eventlog.store import READ_CACHE_KIB, SCAN_CACHE_KIB


def test_a_read_only_connection_keeps_a_larger_page_cache(tmp_path: Path) -> None:
    EventLog(tmp_path / "log.db").close()
    reader = EventLog(tmp_path / "log.db", readonly=True)
    assert reader.connection().execute("PRAGMA cache_size").fetchone()[0] == -READ_CACHE_KIB
    reader.close()


def test_a_writers_connection_keeps_sqlites_default(tmp_path: Path) -> None:
    writer = EventLog(tmp_path / "log.db")
    assert writer.connection().execute("PRAGMA cache_size").fetchone()[0] == -2000
    writer.close()


def test_a_scan_of_the_whole_log_keeps_sqlites_default_then_gives_the_larger_cache_back(
    tmp_path: Path,
) -> None:
    EventLog(tmp_path / "log.db").close()
    reader = EventLog(tmp_path / "log.db", readonly=True)
    cache = "PRAGMA cache_size"
    with reader.scanning(), reader.snapshot() as conn:
        assert conn.execute(cache).fetchone()[0] == -SCAN_CACHE_KIB
        assert reader.verify().ok
    assert reader.connection().execute(cache).fetchone()[0] == -READ_CACHE_KIB
    reader.close()
