"""``writegate log``: -n, --reverse with its paging, --follow, every --format, and unknown
event types refused (issue 10, newcomer 6 and 7)."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
from pathlib import Path

from tests.cli.conftest import as_json, write_history, writegate
from tests.conftest import SEED_SCHEMA, person
from tests.server.harness import WRITEGATE
from writegate.gate import Gate


def seqs(db: Path, *args: str) -> list[int]:
    lines = writegate(db, "log", *args, "--format", "jsonl").stdout.splitlines()
    return [json.loads(line)["seq"] for line in lines]


def test_n_and_reverse_page_both_ways(history: Path) -> None:
    assert seqs(history, "-n", "3") == [1, 2, 3]
    assert seqs(history, "--after", "3", "-n", "2") == [4, 5]
    assert seqs(history, "--reverse", "-n", "3") == [15, 14, 13]
    shown = writegate(history, "log", "--reverse", "-n", "3", env={"COLUMNS": "200"})
    assert [int(line.split()[0]) for line in shown.stdout.splitlines()] == [15, 14, 13]
    assert shown.stderr == "… more: --reverse --to-seq 12\n"
    assert seqs(history, "--reverse", "-n", "3", "--to-seq", "12") == [12, 11, 10]
    assert seqs(history, "--reverse", "--type", "node.deleted") == [14]
    assert seqs(history, "--reverse", "--agent", "bob-bot", "-n", "2") == [12, 8]
    assert seqs(history, "--reverse", "--node", 'Person{"name":"Alice"}', "-n", "2") == [7, 2]


def test_json_is_one_document_that_says_where_to_continue(history: Path) -> None:
    forward = as_json(history, "log", "-n", "2", "--format", "json")
    assert [e["seq"] for e in forward["events"]] == [1, 2]
    assert forward["next_after"] == 2
    backward = as_json(history, "log", "--reverse", "-n", "2", "--format", "json")
    assert [e["seq"] for e in backward["events"]] == [15, 14]
    assert backward["next_to_seq"] == 13
    last = as_json(history, "log", "--after", "14", "--format", "json")
    assert ([e["seq"] for e in last["events"]], last["next_after"]) == ([15], None)
    assert seqs(history, "-n", "2") == [
        json.loads(line)["seq"]
        for line in writegate(history, "log", "-n", "2", "--json").stdout.splitlines()
    ]


def test_an_unknown_event_type_is_refused(history: Path) -> None:
    """It used to print nothing and exit 0, as if no such event had happened."""
    done = writegate(history, "log", "--type", "node.writen", code=2)
    assert done.stdout == ""
    assert done.stderr.startswith("error: --type 'node.writen' is not an event type (")
    assert done.stderr.rstrip().endswith("did you mean node.written or node.deleted?")
    assert len(done.stderr.splitlines()) == 1


def test_follow_prints_what_is_appended_until_sigterm(tmp_path: Path) -> None:
    db = write_history(tmp_path / "live.db")
    follower = subprocess.Popen(
        [WRITEGATE, "--db", str(db), "log", "--follow", "-n", "2", "--format", "jsonl"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ,
    )
    assert follower.stdout is not None
    lines: queue.Queue[str] = queue.Queue()
    output = follower.stdout

    def pump() -> None:
        for line in output:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    try:

        def next_seq() -> int:
            return int(json.loads(lines.get(timeout=30))["seq"])  # the timeout only catches a hang

        assert [next_seq(), next_seq()] == [14, 15]
        with Gate.open(db) as gate:
            gate.write_node(**person("Grace"))
            gate.write_node(**person("Hedy"))
        assert [next_seq(), next_seq()] == [16, 17]
        follower.send_signal(signal.SIGTERM)
        assert follower.wait(timeout=30) == 0
    finally:
        if follower.poll() is None:
            follower.kill()
            follower.wait()


def test_follow_refuses_what_cannot_be_followed(history: Path) -> None:
    for args in (["--reverse"], ["--format", "json"], ["--to-seq", "3"]):
        done = writegate(history, "log", "--follow", *args, code=2)
        assert done.stderr.startswith("error: --follow prints events as they come")


def test_node_lists_the_nodes_corroborations_with_its_writes(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    with Gate.open(db) as gate:
        gate.publish_schema(SEED_SCHEMA)
        gate.write_node(**person("Ada"))
        gate.write_node(**person("Ada", source="registry", extraction_method="api"))
        gate.write_node(**person("Alan"))
    node = 'Person{"name":"Ada"}'
    assert seqs(db, "--node", node) == [2, 3]
    assert seqs(db, "--reverse", "--node", node) == [3, 2]
    types = [
        json.loads(line)["type"]
        for line in writegate(db, "log", "--node", node, "--format", "jsonl").stdout.splitlines()
    ]
    assert types == ["node.written", "node.corroborated"]
