"""The resolution bench's graphs hold what a graph written through the gate holds: one
grown from a smaller kept graph, and one with resolution (names only, or weighing evidence)
derived from the plain graph of the same people by publishing its schema, have the read
model a build from nothing has — the same tables and indexes, and the same rows."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from bench.resolution_graphs import Graph, details, made_as, make

PEOPLE = 300
BATCH = 100
KEPT = ("identity", "label", "keys", "properties", "version", "stub", "scope", "resolution_keys")


def _layout(path: Path) -> tuple[list[tuple[str, str, str]], dict[str, list[tuple[object, ...]]]]:
    """The database's tables and indexes, and the rows of the read model's node and
    resolution tables (a node's stamps — its seqs, time, provenance — left out)."""
    with sqlite3.connect(path) as conn:
        schema = sorted(
            conn.execute("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL")
        )
        rows = {
            "state_nodes": sorted(conn.execute(f"SELECT {', '.join(KEPT)} FROM state_nodes")),
            "state_resolution_keys": list(conn.execute("SELECT * FROM state_resolution_keys")),
            "state_value_counts": sorted(conn.execute("SELECT * FROM state_value_counts")),
            "state_counts": sorted(conn.execute("SELECT * FROM state_counts")),
        }
    return schema, rows


def _made(
    tmp_path: Path,
    name: str,
    mode: str,
    grown_from: Path | None = None,
    derived_from: Path | None = None,
) -> Path:
    where = tmp_path / f"{name}.db"
    grown, derived = (str(p) if p else None for p in (grown_from, derived_from))
    make(Graph(str(where), "realistic", PEOPLE, mode, grown, derived, BATCH))
    return where


@pytest.mark.parametrize("mode", ["propose", "evidence"])
def test_a_derived_graph_has_the_read_model_of_one_written_through_the_gate(
    tmp_path: Path, mode: str
) -> None:
    plain = _made(tmp_path, "plain", "off")
    written = _made(tmp_path, "written", mode)
    derived = _made(tmp_path, "derived", mode, derived_from=plain)
    assert _layout(derived) == _layout(written)
    assert _layout(derived)[1]["state_resolution_keys"]
    assert bool(_layout(derived)[1]["state_value_counts"]) == (mode == "evidence")
    assert made_as(derived, PEOPLE, mode) == "derived"
    assert made_as(written, PEOPLE, mode) == "built"
    assert made_as(plain, PEOPLE, mode) is None  # a derivation killed before its schema


def test_a_grown_graph_has_the_read_model_of_one_built_from_nothing(tmp_path: Path) -> None:
    for mode in ("off", "evidence"):
        small = tmp_path / f"small-{mode}.db"
        make(Graph(str(small), "realistic", 2 * BATCH, mode, batch=BATCH))
        whole = _made(tmp_path, f"whole-{mode}", mode)
        grown = _made(tmp_path, f"grown-{mode}", mode, grown_from=small)
        assert _layout(grown) == _layout(whole)


def test_every_mode_writes_a_person_the_same_spread_details() -> None:
    assert details("Ada Lovelace") == details("Ada Lovelace")
    spread = [details(f"person {i}") for i in range(3_000)]
    assert all("1930-01-01" <= d["dob"] <= "2005-12-31" for d in spread)
    assert len({d["postcode"] for d in spread}) > 1_500
    assert len({d["city"] for d in spread}) == 300
