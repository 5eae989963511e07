"""``[embeddings]`` as an operator configures it: the projection ``vectors`` in ``status``,
``replay`` and ``rebuild`` with the shipped model; an embedder that cannot be had is one line."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.conftest import SEED_SCHEMA
from tests.console import run as writegate_run
from tests.projections.history import build_history
from writegate.gate import Gate


def run(db: Path, toml: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return writegate_run(["--db", str(db), "--config", str(toml), *args])


def configured(tmp_path: Path, db: Path, embeddings: str) -> Path:
    with Gate.open(db) as gate:
        gate.publish_schema(SEED_SCHEMA)
        build_history(gate)
    toml = tmp_path / "writegate.toml"
    toml.write_text(embeddings)
    return toml


def rows(proc: subprocess.CompletedProcess[str]) -> dict[str, dict[str, object]]:
    return {row["name"]: row for row in map(json.loads, proc.stdout.splitlines())}


def test_status_shows_the_followers_lag_until_it_is_replayed(tmp_path: Path, db_path: Path) -> None:
    toml = configured(tmp_path, db_path, '[embeddings]\nprovider = "wordllama"\n')
    before = run(db_path, toml, "status", "--json")
    assert before.returncode == 0, before.stderr
    vectors = rows(before)["vectors"]
    head = rows(before)["state"]["head"]
    assert (vectors["checkpoint"], vectors["lag"]) == (0, head)
    assert vectors["store"] == "vectors by wordllama"
    replayed = run(db_path, toml, "replay", "vectors")
    assert replayed.returncode == 0, replayed.stderr
    after = rows(run(db_path, toml, "status", "--json"))["vectors"]
    assert (after["checkpoint"], after["lag"]) == (head, 0)
    assert (tmp_path / "log-vectors.db").exists()  # beside the log, not in it
    rebuilt = run(db_path, toml, "rebuild", "vectors")
    assert rebuilt.returncode == 0, rebuilt.stderr


def test_an_unknown_embedder_is_one_line(tmp_path: Path, db_path: Path) -> None:
    toml = configured(tmp_path, db_path, '[embeddings]\nprovider = "word-llama"\n')
    replayed = run(db_path, toml, "replay", "vectors")
    assert replayed.returncode != 0
    assert "Traceback" not in replayed.stderr
    assert "no embedder named 'word-llama'" in replayed.stderr
    assert "wordllama" in replayed.stderr  # the installed ones are named
    status = run(db_path, toml, "status", "--json")
    assert status.returncode != 0
    assert "no embedder named 'word-llama'" in str(rows(status)["vectors"]["error"])


def test_an_embedder_whose_package_is_missing_is_one_line(tmp_path: Path, db_path: Path) -> None:
    toml = configured(
        tmp_path, db_path, '[embeddings]\nprovider = "not_installed.models:Embedder"\n'
    )
    replayed = run(db_path, toml, "replay", "vectors")
    assert replayed.returncode != 0
    assert "Traceback" not in replayed.stderr
    assert "cannot load embedder 'not_installed.models:Embedder'" in replayed.stderr


def test_a_question_whose_embedder_is_missing_is_one_line(tmp_path: Path, db_path: Path) -> None:
    toml = configured(
        tmp_path, db_path, '[embeddings]\nprovider = "not_installed.models:Embedder"\n'
    )
    asked = run(db_path, toml, "query", "Ada")
    assert asked.returncode != 0
    assert asked.stderr.splitlines() == [
        "error: EMBEDDER_UNAVAILABLE: cannot load embedder 'not_installed.models:Embedder': "
        "No module named 'not_installed'"
    ]


def test_a_dotted_path_names_an_embedder_that_is_not_registered(
    tmp_path: Path, db_path: Path
) -> None:
    spec = "tests.projections.hashing_embedder:HashingEmbedder"
    toml = configured(tmp_path, db_path, f'[embeddings]\nprovider = "{spec}"\n')
    assert run(db_path, toml, "replay", "vectors").returncode == 0
    assert rows(run(db_path, toml, "status", "--json"))["vectors"]["lag"] == 0


def test_vectors_are_configured_only_by_embeddings(tmp_path: Path, db_path: Path) -> None:
    toml = configured(
        tmp_path,
        db_path,
        '[projections.mine]\nkind = "vectors"\n[projections.mine.embeddings]\nprovider = "wordllama"\n',
    )
    proc = run(db_path, toml, "status")
    assert proc.returncode != 0
    assert "configure [embeddings] instead" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_query_fuses_the_configured_embedders_nearest_with_the_words(
    tmp_path: Path, db_path: Path
) -> None:
    spec = "tests.projections.hashing_embedder:HashingEmbedder"
    toml = configured(tmp_path, db_path, f'[embeddings]\nprovider = "{spec}"\n')
    said = run(db_path, toml, "observe", "Ada adopted a puppy called Rex", "--source", "chat",
               "--method", "parsed", "--format", "json")  # fmt: skip
    assert said.returncode == 0, said.stderr
    kept = json.loads(said.stdout)["observation_id"]
    asked = ("query", "puppy Rex", "--format", "json")
    before = json.loads(run(db_path, toml, *asked).stdout)["observations"]
    assert [(o["observationId"], o["foundBy"]) for o in before] == [(kept, ["observation_text"])]
    assert run(db_path, toml, "replay", "vectors").returncode == 0  # the follower catches up
    after = json.loads(run(db_path, toml, *asked).stdout)["observations"]
    assert [(o["observationId"], o["foundBy"]) for o in after] == [
        (kept, ["observation_text", "observation_meaning"])
    ]


def test_the_stronger_embedder_finds_what_the_words_do_not(tmp_path: Path, db_path: Path) -> None:
    toml = configured(tmp_path, db_path, '[embeddings]\nprovider = "minilm"\n')
    said = run(db_path, toml, "observe", "Ada adopted a puppy from the shelter", "--source",
               "chat", "--method", "parsed", "--format", "json")  # fmt: skip
    kept = json.loads(said.stdout)["observation_id"]
    assert run(db_path, toml, "replay", "vectors").returncode == 0
    asked = json.loads(run(db_path, toml, "query", "her new dog", "--format", "json").stdout)
    assert [(o["observationId"], o["foundBy"]) for o in asked["observations"]] == [
        (kept, ["observation_meaning"])
    ]


def test_serve_with_an_embedder_it_cannot_have_stops_at_start(tmp_path: Path, db_path: Path) -> None:
    """It served, and refused every graph_query with an internal error."""
    toml = configured(
        tmp_path, db_path, '[embeddings]\nprovider = "not_installed.models:Embedder"\n'
    )
    served = writegate_run(["--db", str(db_path), "--config", str(toml), "serve"], input="")
    assert served.returncode == 2
    assert served.stderr.splitlines() == [
        "error: [embeddings] cannot load embedder 'not_installed.models:Embedder': "
        "No module named 'not_installed'"
    ]


def test_the_environment_alone_configures_embeddings(tmp_path: Path, db_path: Path) -> None:
    """``[embeddings]`` set by its variables, with no config file, was not read."""
    (configured(tmp_path, db_path, "")).unlink()
    env = {"WRITEGATE_EMBEDDINGS__PROVIDER": "word-llama"}
    asked = writegate_run(["--db", str(db_path), "query", "Ada"], env=env, cwd=tmp_path)
    assert asked.returncode != 0  # it answered by the words alone
    assert "no embedder named 'word-llama'" in asked.stderr
