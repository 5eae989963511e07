"""``writegate desk``: a read-only desk on a log, on loopback, on either backend: every
page reads, and no action is offered or routed (nothing can be posted at all)."""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import httpx2
import pytest

from tests.desk.conftest import HOSTILE, build_log
from tests.server.harness import WRITEGATE, stop, written_so_far


@pytest.fixture
def local_desk(any_db: str | Path, tmp_path: Path) -> Iterator[str]:
    """``writegate desk`` on a log with held writes, until the test ends; its URL."""
    build_log(any_db, tmp_path)
    with tempfile.TemporaryFile() as said:
        process = subprocess.Popen(
            [WRITEGATE, "--db", str(any_db), "desk"],
            stdout=subprocess.DEVNULL,
            stderr=said,
            env=os.environ,
        )
        try:
            yield _url(process, said)
        finally:
            stop(process)


def _url(process: subprocess.Popen[bytes], said: IO[bytes]) -> str:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        text = written_so_far(said)
        if "writegate desk on " in text:
            return text.split("writegate desk on ", 1)[1].split()[0].rstrip("/")
        assert process.poll() is None, text
        time.sleep(0.05)
    raise AssertionError("writegate desk did not start")


def test_a_local_desk_reads_without_sign_in_and_offers_no_action(local_desk: str) -> None:
    with httpx2.Client(base_url=local_desk, timeout=30) as client:
        overview = client.get("/")
        node = client.get("/node", params={"label": "Person", "keys": '{"name":"Ada"}'})
        hostile = client.get("/node", params={"label": "Person", "keys": f'{{"name":"{HOSTILE}"}}'})
        log = client.get("/log")
        assert [p.status_code for p in (overview, node, hostile, log)] == [200] * 4
        for page in (overview, node, hostile, log):
            assert 'method="post"' not in page.text
            assert "<img src=x" not in page.text
        assert "read-only copy" in overview.text
        assert "Lisbon" in node.text
        assert client.get("/review").status_code == 404
        assert client.get("/signin").status_code == 404
        assert client.post("/review/0123", data={"decision": "approve"}).status_code in (404, 405)
        assert client.post("/signout").status_code in (404, 405)


def test_a_local_desk_listens_on_loopback_only(local_desk: str) -> None:
    assert local_desk.startswith("http://127.0.0.1:")
    port = local_desk.split(":")[2].split("/", maxsplit=1)[0]
    answer = httpx2.get(local_desk + "/", headers={"Host": f"desk.example:{port}"})
    assert answer.status_code == 403
