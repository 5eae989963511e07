"""``/metrics``' projection lag: each store is asked off the event loop, so one that never
answers costs a scrape a short wait (its lag NaN, its ``up`` 0) and nobody else anything."""

from __future__ import annotations

import threading
from pathlib import Path

import httpx2
import pytest

from tests.conftest import person
from tests.console import run as writegate_run
from tests.hung import hung_server
from tests.server.conftest import published
from tests.server.harness import http_server
from writegate.eventlog import Actor
from writegate.gate import Gate

HANG = 30  # seconds: only catches a request stuck behind the store (the driver waited 60 s)


def _config(tmp_path: Path, body: str) -> dict[str, str]:
    config = tmp_path / "writegate.toml"
    config.write_text(body)
    return {"WRITEGATE_CONFIG": str(config)}


def test_a_store_that_never_answers_blocks_neither_metrics_nor_other_requests(
    db_path: Path, tmp_path: Path
) -> None:
    with hung_server() as hung:
        env = _config(tmp_path, f'[projections.g]\nkind = "graph"\nuri = "{hung.uri}"\n')
        with http_server(published(db_path), env=env, extra=("--metrics",)) as server:
            base = server.url.removesuffix("/mcp")
            scraped: list[httpx2.Response] = []
            scrape = threading.Thread(
                target=lambda: scraped.append(httpx2.get(f"{base}/metrics", timeout=HANG))
            )
            scrape.start()
            assert hung.accepted.wait(HANG)  # the store is being asked, and will not answer
            health = httpx2.get(f"{base}/healthz", timeout=HANG)
            asked_still = hung.waiting()
            scrape.join(HANG)
            still_after_scrape = hung.gave_up() == 0
    assert health.status_code == 200
    assert asked_still == 1  # /healthz answered while the store's attempt was still waiting
    assert still_after_scrape  # and so did /metrics
    text = scraped[0].text
    assert 'writegate_projection_lag{projection="g"} NaN' in text
    assert 'writegate_projection_up{projection="g"} 0.0' in text
    assert "writegate_log_head_seq 1.0" in text


def test_metrics_give_each_projections_lag_behind_the_log(db_path: Path, tmp_path: Path) -> None:
    published(db_path)
    with Gate.open(db_path) as gate:
        for name in ("Ada", "Bob"):
            gate.write_node(actor=Actor(agent="a"), **person(name))
    env = _config(
        tmp_path, f'[projections.snap]\nkind = "jsonl"\npath = "{tmp_path / "g.jsonl"}"\n'
    )
    with http_server(db_path, env=env, extra=("--metrics",)) as server:
        base = server.url.removesuffix("/mcp")
        behind = httpx2.get(f"{base}/metrics", timeout=HANG).text
        replayed = writegate_run(["--db", str(db_path), "replay", "snap"], env=env)
        assert replayed.returncode == 0, replayed.stderr
        caught_up = httpx2.get(f"{base}/metrics", timeout=HANG).text
    assert "applied 3 events" in replayed.stdout
    assert 'writegate_projection_lag{projection="snap"} 3.0' in behind
    assert 'writegate_projection_up{projection="snap"} 1.0' in behind
    assert 'writegate_projection_lag{projection="snap"} 0.0' in caught_up


@pytest.mark.parametrize("configured", [False, True])
def test_metrics_without_projections_have_no_lag(
    db_path: Path, tmp_path: Path, configured: bool
) -> None:
    env = _config(tmp_path, "[serve]\nmetrics = true\n") if configured else {}
    with http_server(published(db_path), env=env, extra=("--metrics",)) as server:
        text = httpx2.get(server.url.removesuffix("/mcp") + "/metrics", timeout=HANG).text
    assert "writegate_projection_lag{" not in text
