"""The exact scan's in-memory copy: rows replaced, forgotten, moved between kinds, reused,
grown; ties at the k-th place decided by identity, as the contract says."""

from __future__ import annotations

import numpy as np

from writegate.projections.vectors.contract import Entry, Similar
from writegate.projections.vectors.matrix import VectorMatrix


def vector(*values: float) -> bytes:
    row = np.zeros(4, dtype=np.float32)
    row[: len(values)] = values
    return (row / np.linalg.norm(row)).astype(np.float32).tobytes()


def matrix(*entries: Entry) -> VectorMatrix:
    made = VectorMatrix()
    made.restart(1, 4)
    made.apply(entries, 1)
    return made


def test_ties_at_the_kth_place_are_decided_by_identity() -> None:
    tied = [Entry(name, "node", vector(1, 0)) for name in ("d", "b", "c", "a")]
    found = matrix(*tied, Entry("far", "node", vector(0, 1))).nearest(
        np.array([1, 0, 0, 0], dtype=np.float32), 2, "node"
    )
    assert [s.identity for s in found] == ["a", "b"]


def test_a_row_is_replaced_forgotten_and_moved_between_kinds() -> None:
    made = matrix(Entry("x", "node", vector(1, 0)), Entry("y", "node", vector(1, 1)))
    query = np.array([1, 0, 0, 0], dtype=np.float32)
    assert [s.identity for s in made.nearest(query, 5, "node")] == ["x", "y"]
    made.apply([Entry("x", "node", vector(1, 0, 1))], 2)  # replaced: now as near as y
    assert [s.identity for s in made.nearest(query, 5, "node")] == ["x", "y"]
    assert abs(made.nearest(query, 1, "node")[0].similarity - 2**-0.5) < 1e-6
    made.apply([Entry("y", "", None)], 3)  # gone
    assert [s.identity for s in made.nearest(query, 5, "node")] == ["x"]
    made.apply([Entry("x", "relationship", vector(1, 0))], 4)  # now of another kind
    assert made.nearest(query, 5, "node") == []
    assert made.nearest(query, 5, "relationship") == [Similar("x", 1.0)]


def test_freed_rows_are_reused_and_the_copy_grows_past_its_first_rows() -> None:
    made = matrix(*(Entry(f"n{i:05d}", "node", vector(1, i)) for i in range(3000)))
    made.apply([Entry(f"n{i:05d}", "", None) for i in range(0, 3000, 2)], 2)
    made.apply([Entry(f"m{i:05d}", "node", vector(i, 1)) for i in range(1500)], 3)
    rows = made.kinds["node"]
    assert len(rows.identities) == 3000  # the 1,500 freed rows taken again
    found = made.nearest(np.array([0, 1, 0, 0], dtype=np.float32), 3000, "node")
    assert len(found) == 3000
    assert {s.identity for s in found} == {f"n{i:05d}" for i in range(1, 3000, 2)} | {
        f"m{i:05d}" for i in range(1500)
    }


def test_the_last_write_of_an_identity_in_one_read_wins() -> None:
    made = matrix(
        Entry("x", "node", vector(1, 0)), Entry("x", "", None), Entry("x", "node", vector(0, 1))
    )
    found = made.nearest(np.array([0, 1, 0, 0], dtype=np.float32), 1, "node")
    assert found[0].identity == "x"
    assert abs(found[0].similarity - 1.0) < 1e-6


def test_only_rows_similar_at_all_are_neighbours() -> None:
    made = matrix(
        Entry("near", "node", vector(1, 1)),
        Entry("across", "node", vector(0, 1)),
        Entry("away", "node", vector(-1, 0)),
        Entry("wordless", "node", np.zeros(4, dtype=np.float32).tobytes()),
    )
    found = made.nearest(np.array([1, 0, 0, 0], dtype=np.float32), 10, "node")
    assert [s.identity for s in found] == ["near"]
    assert made.nearest(np.zeros(4, dtype=np.float32), 10, "node") == []
