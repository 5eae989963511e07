"""Small SQLite helpers shared by the store and the read models kept in its file."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator


def statements(script: str) -> Iterator[str]:
    """Split a script into complete statements (triggers keep their inner ';').

    ``executescript`` would commit the open transaction first; executing statement by
    statement keeps installation inside the caller's transaction.
    """
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            if pending.strip():
                yield pending.strip()
            pending = ""
    if pending.strip():
        raise ValueError(f"incomplete SQL statement: {pending.strip()[:80]}")


def run_script(conn: sqlite3.Connection, script: str) -> None:
    for statement in statements(script):
        conn.execute(statement)
