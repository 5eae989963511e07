"""``writegate forget`` brings a live graph store along before it answers (issue 40): with a
Bolt projection configured beside the files, no byte of the person stays in the graph
database's files, the log's or the projections' once the command has answered — on each
backend of the log."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from tests.cli.conftest import writegate
from tests.cli.test_forget_projections import FILES, files_holding, person_log
from tests.projections.arcadedb import flush, server_command
from writegate.projections.graph import BoltTarget


def test_forget_lets_go_of_the_person_in_the_graph_store_before_it_answers(
    any_db: str | Path, tmp_path: Path, arcadedb: BoltTarget, arcadedb_root: Path
) -> None:
    database = f"forgetcli{os.urandom(4).hex()}"  # a database of its own: its files are its
    server_command(arcadedb_root, arcadedb.password, f"create database {database}")
    own = replace(arcadedb, database=database)
    graph = (
        f'\n[projections.graph]\nkind = "graph"\nuri = "{own.uri}"\nuser = "{own.user}"\n'
        f'password = "{own.password}"\ndatabase = "{database}"\ndialect = "neo4j"\n'
    )
    folder = tmp_path / "files"
    folder.mkdir()
    db, toml, marker = person_log(any_db, folder, False, FILES + graph)
    writegate(db, "--config", str(toml), "replay", "graph")
    flush(arcadedb_root, arcadedb.password, database)
    files = arcadedb_root / "databases" / database
    assert files_holding(files, marker)  # the test can fail
    forgot = writegate(db, "--config", str(toml), "forget", f"Person:name={marker}")
    assert forgot.stderr == ""
    flush(arcadedb_root, arcadedb.password, database)  # what an operator does after forget
    assert files_holding(files, marker) == []
    assert files_holding(folder, marker) == []
    writegate(db, "--config", str(toml), "verify")
