"""The resolution bench's graphs hold what a graph written through the gate holds: one
grown from a smaller kept graph, and one with resolution derived from the plain graph of
the same people (its keys indexed without their writes), have the read model a build from
nothing has — the same tables and indexes, and the same rows."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from bench.resolution_graphs import Graph, make

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
    resolving: bool,
    grown_from: Path | None = None,
    derived_from: Path | None = None,
) -> Path:
    where = tmp_path / f"{name}.db"
    grown, derived = (str(p) if p else None for p in (grown_from, derived_from))
    make(Graph(str(where), "realistic", PEOPLE, resolving, grown, derived, BATCH))
    return where


def test_a_derived_graph_has_the_read_model_of_one_written_through_the_gate(
    tmp_path: Path,
) -> None:
    plain = _made(tmp_path, "plain", resolving=False)
    written = _made(tmp_path, "written", resolving=True)
    derived = _made(tmp_path, "derived", resolving=True, derived_from=plain)
    assert _layout(derived) == _layout(written)
    assert _layout(derived)[1]["state_resolution_keys"]


def test_a_grown_graph_has_the_read_model_of_one_built_from_nothing(tmp_path: Path) -> None:
    for resolving in (False, True):
        small = tmp_path / f"small-{resolving}.db"
        make(Graph(str(small), "realistic", 2 * BATCH, resolving, batch=BATCH))
        whole = _made(tmp_path, f"whole-{resolving}", resolving=resolving)
        grown = _made(
            tmp_path,
            f"grown-{resolving}",
            resolving=resolving,
            grown_from=small,
        )
        assert _layout(grown) == _layout(whole)
