"""``writegate follow`` as operators run it: killed mid-replay, restarted, nothing lost or doubled."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import SEED_SCHEMA
from tests.server.harness import WRITEGATE
from writegate.eventlog import Actor
from writegate.gate import Gate
from writegate.projections.graph import BoltTarget, GraphProjector
from writegate.projections.runner import rebuild

pytestmark = pytest.mark.slow
PEOPLE = 3000  # 6,000 events: some 24 batches of 250 a replay, each kill lands inside one


def big_log(db: Path) -> int:
    common = {"source": "bulk", "extraction_method": "api", "reliability": 0.9}
    with Gate.open(db, default_actor=Actor(agent="loader")) as gate:
        gate.publish_schema(SEED_SCHEMA)
        for start in range(0, PEOPLE, 1000):
            items = [
                {
                    "op": "write_node",
                    "label": "Person",
                    "merge_keys": {"name": f"p{i}"},
                    "properties": {"age": i % 90},
                    **common,
                }
                for i in range(start, start + 1000)
            ]
            items += [
                {
                    "op": "write_relationship",
                    "type": "KNOWS",
                    "from_label": "Person",
                    "from_keys": {"name": f"p{i}"},
                    "to_label": "Person",
                    "to_keys": {"name": f"p{i - 1}"},
                    **common,
                }
                for i in range(start + 1, start + 1000)
            ]
            assert gate.write_batch(items=items).status == "written"
        return gate.log.head()[0]


def config(tmp_path: Path, target: BoltTarget) -> tuple[Path, dict[str, str]]:
    toml = tmp_path / "writegate.toml"
    toml.write_text(
        "[projections.graph]\n"
        'kind = "graph"\n'
        f'uri = "{target.uri}"\n'
        f'user = "{target.user}"\n'
        f'database = "{target.database}"\n'
        f'dialect = "{target.dialect}"\n'
        "batch = 250\n"
    )
    env = {**os.environ, "WRITEGATE_PROJECTIONS__GRAPH__PASSWORD": target.password}
    return toml, env


def start_follow(db: Path, toml: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [WRITEGATE, "--db", str(db), "--config", str(toml), "follow", "--interval", "0.05"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def wait_for(condition: object, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_sigkill_during_follow_then_restart_equals_a_fresh_rebuild(
    tmp_path: Path, db_path: Path, bolt: BoltTarget
) -> None:
    head = big_log(db_path)
    toml, env = config(tmp_path, bolt)
    watcher = GraphProjector(bolt)
    try:
        kills = []
        for fraction in (0.15, 0.45, 0.75):
            follower = start_follow(db_path, toml, env)
            wait_for(lambda: watcher.checkpoint() >= head * fraction)  # noqa: B023
            follower.send_signal(signal.SIGKILL)
            follower.wait()
            kills.append(watcher.checkpoint())
        assert all(0 < k < head for k in kills), kills  # each kill landed mid-replay

        follower = start_follow(db_path, toml, env)
        wait_for(lambda: watcher.checkpoint() == head)
        follower.send_signal(signal.SIGTERM)
        assert follower.wait(timeout=30) == 0
        assert b"stopped" in follower.stderr.read()  # type: ignore[union-attr]
        followed = watcher.snapshot()

        with Gate.open(db_path, create=False) as gate:
            rebuild(gate.log, watcher)
        fresh = watcher.snapshot()
    finally:
        watcher.close()

    assert len(followed["nodes"]) == len(fresh["nodes"]) == PEOPLE
    assert len(followed["relationships"]) == len(fresh["relationships"]) == PEOPLE - PEOPLE // 1000
    assert followed == fresh  # every property of every node and relationship
    names = [props["name"] for _, props in followed["nodes"]]
    assert len(set(names)) == len(names)  # no duplicates
