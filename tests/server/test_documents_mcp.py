"""Issue 39, acceptance 3, through the MCP SDK's client on stdio and HTTP: a megabyte document
recorded as one observation answers a question about its middle passage in the top 3 of
``graph_query`` and ``search_observations``, a write cites that passage (accepted, and the
audit trail names it), the document opens whole, and forgetting the person it is of takes
the whole text and every passage out of the log's files. ``writegate observe --file`` keeps
a big file the same way."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.cli.conftest import writegate
from tests.conftest import ROOT
from tests.documents import FACT, QUESTION, document
from tests.server.harness import Served
from writegate.gate import Gate
from writegate.gate.passages import MAX_PASSAGE

pytestmark = pytest.mark.anyio
CLAIM = {"source": "paste:manual", "extraction_method": "manual"}
OTTOLINE = {"label": "Person", "merge_keys": {"name": "Ottoline Varga"}}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=["stdio", "http"])
def personal(request: pytest.FixtureRequest, db_path: Path) -> Iterator[Served]:
    """People and their observations personal (``fixtures/personal_schema.yaml``), served."""
    schema = yaml.safe_load((ROOT / "fixtures" / "personal_schema.yaml").read_text())
    schema["personal_observations"] = True
    with Gate.open(db_path) as gate:
        assert gate.publish_schema(schema).status == "published"
    served = Served(request.param, db_path)
    yield served
    served.close()


def head(db: Path) -> int:
    with Gate.open(db, readonly=True) as gate:
        return gate.log.head()[0]


def on_disk(db: Path) -> bytes:
    wal = Path(f"{db}-wal")
    return db.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


async def test_a_megabyte_document_is_one_observation_found_cited_and_forgotten_by_passage(
    personal: Served,
) -> None:
    text, at = document(1_000_000)
    assert len(text.encode()) > 15 * 65_536  # far above what one value may be
    before = head(personal.db)
    async with personal.agent("reader-agent") as agent:
        kept = await agent.call("record_observation", {"text": text, **CLAIM})
        assert kept.data["status"] == "recorded", kept.data
        assert head(personal.db) == before + 1  # one event
        document_id, starts = kept.data["observation_id"], kept.data["passages"]
        passage = f"{document_id}#{max(s for s in starts if s <= at)}"
        assert 0.4 < starts.index(int(passage.split("#")[1])) / len(starts) < 0.6  # the middle

        answer = (await agent.call("graph_query", {"query": QUESTION})).data
        top = answer["observations"][:3]
        assert passage in [o["observationId"] for o in top]
        hit = next(o for o in top if o["observationId"] == passage)
        assert FACT in hit["text"]
        assert len(hit["text"]) <= MAX_PASSAGE  # the passage, not the megabyte
        assert (hit["document"], hit["start"]) == (document_id, int(passage.split("#")[1]))
        searched = (await agent.call("search_observations", {"query": QUESTION, "limit": 3})).data
        assert passage in [o["observation_id"] for o in searched["observations"]]

        written = await agent.call(
            "write_node", {**OTTOLINE, "properties": {"role": "keeper"}, **CLAIM,
                           "observations": [passage]},
        )  # fmt: skip
        assert written.data["status"] == "written", written.data
        cited = await agent.call("open_observation", {"observation_id": passage})
        assert FACT in cited.data["text"]
        [fact] = cited.data["facts"]  # the node written from it, named by its pseudonym
        assert fact.startswith("Person~")
        whole = await agent.call("open_observation", {"observation_id": document_id})
        assert whole.data["text"] == text  # the document, whole
        assert whole.data["passages"] == starts
    async with personal.agent("auditor-agent", ("auditor",)) as auditor:
        trail = await auditor.call("audit_events", {"node": OTTOLINE, "limit": 5})
    [event] = [e for e in trail.data["events"] if e["type"] == "node.written"]
    assert event["provenance"]["observations"] == [passage]
    sample = text[2000:2200].encode()  # sentences of the document that are not the fact
    assert sample in on_disk(personal.db)  # the test can fail

    async with personal.agent("ops", ("admin",)) as admin:
        forgot = await admin.call(
            "forget_subject", {"label": "Person", "keys": {"name": "Ottoline Varga"},
                               "reason": "asked"},
        )  # fmt: skip
        assert forgot.data["counts"]["state_passages"] == len(starts), forgot.data
        assert forgot.data["counts"]["state_observations"] == 1
    async with personal.agent("reader-agent") as agent:
        answer = (await agent.call("graph_query", {"query": QUESTION})).data
        again = (await agent.call("search_observations", {"query": "Ottoline Varga"})).data
    assert answer["observations"] == []
    assert again["observations"] == []
    raw = on_disk(personal.db)
    for gone in (sample, b"Ottoline", FACT.encode()):
        assert gone not in raw


def test_observe_keeps_a_big_file_as_one_document(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    with Gate.open(db) as gate:
        assert gate.publish_schema(ROOT / "fixtures" / "seed000_schema.yaml").status == "published"
    text, at = document(1_000_000)
    path = tmp_path / "document.txt"
    path.write_text(text, encoding="utf-8")
    observe = ["observe", "--source", "file:document.txt", "--method", "manual"]
    kept = writegate(db, *observe, "--file", str(path), "--format", "json")
    result = json.loads(kept.stdout)
    assert result["status"] == "recorded"
    piped = writegate(db, *observe, "-", input=text)  # stdin: the same text, one observation
    assert piped.stdout.strip() == result["observation_id"]
    assert f"{len(result['passages'])} passages" in piped.stderr
    found = json.loads(
        writegate(db, "search", "--observations", QUESTION, "--format", "json").stdout
    )
    middle = max(s for s in result["passages"] if s <= at)
    assert found["observations"][0]["observation_id"] == f"{result['observation_id']}#{middle}"
    both = writegate(db, *observe, "--file", str(path), "words", code=2)
    assert "one of them" in both.stderr
    path.write_bytes(b"\xff\xfe not text")
    refused = writegate(db, *observe, "--file", str(path), code=1)
    assert "not UTF-8" in refused.stderr
