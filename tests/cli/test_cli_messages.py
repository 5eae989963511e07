"""What the CLI says when an operator slips (issue 10, newcomer 6): a label that fell back,
a reliability out of range, a synonym relationship type, a file that is no log, a node that
still has relationships, an endpoint that does not exist — each in the CLI's own words."""

from __future__ import annotations

import json
import os
import pty
import signal
import sqlite3
import subprocess
import sys
from contextlib import closing, suppress
from pathlib import Path

import pytest

from tests.cli.conftest import writegate
from tests.conftest import EXAMPLE_SCHEMA
from tests.server.harness import WRITEGATE
from writegate.eventlog import Actor
from writegate.gate import Gate

CLAIM = ("--source", "notes.md", "--method", "llm")
EVENT_LEAVES = "SELECT pageno FROM dbstat WHERE name = 'events' AND pagetype = 'leaf'"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "log.db"
    writegate(path, "init", "--schema", str(EXAMPLE_SCHEMA))
    return path


def test_a_label_that_falls_back_is_said_with_the_closest_one(db: Path) -> None:
    done = writegate(db, "write", "node", "Persn:name=Ada", "--format", "json", *CLAIM)
    assert json.loads(done.stdout)["label"] == "Entity"
    assert done.stderr == (
        "note: Persn is not a label of the schema, so it was written as Entity (the fallback "
        "label); did you mean Person?\n"
    )
    declared = writegate(db, "write", "node", "Person:name=Ada", *CLAIM)
    assert declared.stderr == ""


@pytest.mark.parametrize("reliability", ["7", "-0.1", "1.5"])
def test_reliability_out_of_range_is_refused_not_clamped(db: Path, reliability: str) -> None:
    args = ("write", "node", "Person:name=Ada", *CLAIM, "--reliability", reliability)
    done = writegate(db, *args, code=2)
    assert "Invalid value for '--reliability'" in done.stderr
    assert "is not in the range 0<=x<=1" in done.stderr
    assert writegate(db, "log", "--format", "jsonl").stdout.count("\n") == 1  # the schema only


def test_audit_relationship_finds_a_synonym_types_history(db: Path) -> None:
    writegate(db, "write", "node", "Person:name=Ada", *CLAIM)
    writegate(db, "write", "node", "Organization:name=Acme", *CLAIM)
    ends = ("Person:name=Ada", "Organization:name=Acme")
    written = json.loads(
        writegate(db, "write", "relationship", "WORKS_AT", *ends, *CLAIM, "--json").stdout
    )
    assert written["type"] == "WORKS_FOR"  # WORKS_AT is its synonym
    by_synonym = writegate(db, "audit", "relationship", "WORKS_AT", *ends, "--format", "json")
    by_name = writegate(db, "audit", "relationship", "WORKS_FOR", *ends, "--format", "json")
    assert by_synonym.stdout == by_name.stdout
    trail = json.loads(by_synonym.stdout)
    assert [e["seq"] for e in trail["entries"]] == [written["seq"]]


def test_a_file_that_is_no_log_is_named(tmp_path: Path) -> None:
    junk = tmp_path / "notes.db"
    junk.write_bytes(os.urandom(4096))
    for args in (("log",), ("write", "node", "Person:name=Ada", *CLAIM)):
        done = writegate(junk, *args, code=1)
        assert done.stderr == f"error: {junk}: file is not a database\n", args
    folder = tmp_path / "folder.db"
    folder.mkdir()
    done = writegate(folder, "write", "node", "Person:name=Ada", *CLAIM, code=1)
    assert done.stderr.startswith(f"error: {folder}: ")
    assert done.stderr.count("\n") == 1


def test_a_node_with_relationships_names_the_cli_flag(db: Path) -> None:
    writegate(db, "write", "node", "Person:name=Ada", *CLAIM)
    ends = ("Person:name=Ada", "Organization:name=Acme")
    writegate(db, "write", "relationship", "WORKS_FOR", *ends, "--merge-endpoints", *CLAIM)
    refused = writegate(db, "delete", "node", "Person:name=Ada", *CLAIM, code=1)
    assert refused.stderr == (
        "error: NODE_HAS_RELATIONSHIPS: Person:name=Ada has 1 relationship; delete them "
        "first, or delete them with the node: --detach\n"
    )
    writegate(db, "delete", "node", "Person:name=Ada", "--detach", *CLAIM)


def test_a_missing_endpoint_names_the_cli_flag(db: Path) -> None:
    ends = ("Person:name=Ada", "Organization:name=Acme")
    refused = writegate(db, "write", "relationship", "WORKS_FOR", *ends, *CLAIM, code=1)
    assert refused.stderr == (
        'error: ENDPOINT_NOT_FOUND: from node Person{"name":"Ada"} does not exist (write it '
        "first, or create it as a stub: --merge-endpoints)\n"
    )


def test_a_log_whose_events_are_damaged_is_named_in_the_one_line_saying_so(db: Path) -> None:
    with Gate.open(db) as gate:
        for n in range(40):
            gate.write_node(
                actor=Actor(agent="ops"),
                label="Person",
                merge_keys={"name": f"Person number {n} of many"},
                source="notes.md",
                extraction_method="llm",
            )
    with closing(sqlite3.connect(db)) as conn:  # the events' leaf pages: the file still opens
        (page,) = conn.execute("PRAGMA page_size").fetchone()
        leaves = [n for (n,) in conn.execute(EVENT_LEAVES)]
    damaged = bytearray(db.read_bytes())
    for leaf in leaves:
        damaged[(leaf - 1) * page + 200 : leaf * page - 100] = b"Z" * (page - 300)
    db.write_bytes(damaged)
    done = writegate(db, "verify", code=1)
    assert done.stderr == f"error: {db}: database disk image is malformed\n"


def test_an_option_of_writegate_itself_after_the_command_says_where_it_goes(
    tmp_path: Path,
) -> None:
    """Issue 42: ``log --db X`` answered "No such option '--db'. Did you mean '--node'?"."""
    done = writegate(tmp_path / "log.db", "audit", "node", "--db", "x.db", "Person:name=A", code=2)
    assert done.stderr == (
        "error: --db is an option of writegate itself: it goes before the command "
        "(writegate --db … audit node …)\n"
    )


def test_a_folder_for_the_log_or_a_missing_one_for_a_backup_is_said_plainly(
    tmp_path: Path,
) -> None:
    """Issue 42: ``--db /tmp`` said "disk I/O error"; a backup into a missing folder said
    "is not a directory"."""
    done = writegate(tmp_path, "log", code=1)
    assert done.stderr == (
        f"error: {tmp_path}: a folder, not a log: --db names the log's file ({tmp_path}/x.db)\n"
    )
    db = tmp_path / "log.db"
    writegate(db, "init")
    missing = tmp_path / "nowhere"
    refused = writegate(db, "backup", str(missing / "b.db"), code=1)
    assert f"no folder {missing} to put the backup in: it does not exist" in refused.stderr


def test_a_limit_exceeded_names_the_setting_that_raises_it(db: Path, tmp_path: Path) -> None:
    """Issue 42: ``LIMIT_EXCEEDED`` says which ``[limits]`` setting an operator raises."""
    items = tmp_path / "items.jsonl"
    item = {"op": "write_node", "label": "Person", "source": "s", "extraction_method": "api"}
    items.write_text(
        "".join(json.dumps({**item, "merge_keys": {"name": f"p{i}"}}) + "\n" for i in range(3))
    )
    config = tmp_path / "writegate.toml"
    config.write_text("[limits]\nmax_batch_items = 2\n")
    refused = writegate(db, "--config", str(config), "write", "batch", str(items), code=1)
    [line] = refused.stderr.splitlines()
    assert line.startswith("error: LIMIT_EXCEEDED: items is too large: 3 where max_batch_items")
    assert line.endswith(
        "(an operator raises it: max_batch_items under [limits] in writegate.toml; "
        "or write the file in parts)"
    )
    big = writegate(
        db, "write", "node", "Person:name=Ada", "-p", "bio=" + "x" * 70_000, *CLAIM, code=1
    )
    assert "(an operator raises it: max_value_bytes under [limits] in writegate.toml)" in big.stderr


# the command as a terminal starts it, Ctrl-C its to take: a shell's background job (a CI
# runner's) may start it with SIGINT ignored or blocked, which an exec keeps
AS_A_TERMINAL = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT}); "
    "os.execv(sys.argv[1], sys.argv[1:])"
)


def test_ctrl_c_says_what_became_of_the_work(db: Path, tmp_path: Path) -> None:
    """Issue 42: Ctrl-C during ``write batch`` says that nothing was written, in one line,
    not click's bare ``Aborted!``. The batch comes through a pipe the test holds open, so
    the signal lands while the command is reading it; the pipe is closed after it, because
    a signal caught between two reads of a pipe (inside one C call) interrupts none of them
    and Python raises it only once the reading returns."""
    pipe = tmp_path / "items.pipe"
    os.mkfifo(pipe)
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            AS_A_TERMINAL,
            WRITEGATE,
            "--db",
            str(db),
            "write",
            "batch",
            str(pipe),
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    with pipe.open("w") as writer:  # returns once the command has the pipe open to read
        writer.write(json.dumps({"op": "write_node", "label": "Person"}) + "\n")
        writer.flush()
        process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130
    [line] = stderr.strip().splitlines()
    assert line.startswith("error: interrupted: a write under way was not made")
    with Gate.open(db, readonly=True) as gate:
        assert gate.log.head()[0] == 1  # the schema's event alone


def test_init_in_a_folder_that_is_not_there_names_the_folder(tmp_path: Path) -> None:
    """Issue 42: not sqlite's ``unable to open database file``, nor a bare errno."""
    db = tmp_path / "no" / "such" / "log.db"
    refused = writegate(db, "init", "--schema", str(EXAMPLE_SCHEMA), code=1)
    assert (
        refused.stderr == f"error: {db}: no folder {db.parent} to make the log in (make it first)\n"
    )
    assert not (tmp_path / "no").exists()


def test_export_subject_is_indented_for_a_terminal_and_one_line_for_a_pipe(db: Path) -> None:
    """Issue 42: a person reading a subject's export in a terminal gets it indented; a pipe
    (a script) still gets one JSON value on one line."""
    writegate(db, "write", "node", "Person:name=Ada", "-p", "email=ada@example.org", *CLAIM)
    piped = writegate(db, "export", "subject", "Person:name=Ada").stdout
    assert len(piped.splitlines()) == 1
    leader, follower = pty.openpty()
    command = [WRITEGATE, "--db", str(db), "export", "subject", "Person:name=Ada"]
    process = subprocess.Popen(command, stdout=follower, stderr=subprocess.PIPE)
    os.close(follower)
    shown = b""
    with suppress(OSError):  # read as it comes; the terminal reads EIO once it has gone
        while chunk := os.read(leader, 65536):
            shown += chunk
    os.close(leader)
    assert process.wait(timeout=60) == 0
    text = shown.decode().replace("\r\n", "\n")
    assert text.startswith("{\n  ")
    assert json.loads(text) == json.loads(piped)
