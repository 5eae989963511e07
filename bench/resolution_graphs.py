"""The graphs bench_resolution_gate.py writes into: distinct synthetic people, one log whose
Person label has no resolution and one with ``resolution: {policy: propose}``.

A graph is written through the gate as an import writes one (``write_batch`` of 10,000
items, cyclic GC off), in a process of its own, ``jobs`` at once. Kept graphs (``keep``)
are reused by later runs, and a missing one grows from a kept smaller one of its kind (a
copy, then the people after it: the same batches as a build from nothing). With ``derive``,
a missing graph with resolution is made from the plain graph of the same people instead —
copied, the resolving schema published, and each node's keys indexed as its write would
have indexed them (the gate's ``keys_for``, the state's own statements, in the order the
writes would have run them): the same read model as a graph written through the gate
(``tests/test_bench_resolution_graphs.py``): about half the work at 100k people, but no
less at 1M, where publishing the policy scores every live node for the schema's impact
(``gate.schema.caught``). Its events do not carry the keys, so a replay of it would not
index them: it is for measuring writes, nothing else.
"""

from __future__ import annotations

import multiprocessing
import shutil
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.resolution.synth import distinct_names, person_name, realistic_names
from writegate.eventlog import Actor
from writegate.eventlog.bulk import bulk
from writegate.gate import Gate
from writegate.gate.resolution import matching
from writegate.gate.schema.document import parse_document
from writegate.language import node_identity
from writegate.projections.state import changes

MODES = ("off", "propose")
CLAIM: dict[str, Any] = {"source": "bench", "extraction_method": "api", "reliability": 0.9}
BUILD_BATCH = 1_000
"""Items a batch. Larger ones are slower past 100k nodes: 10,000 took five times the wall time of
1,000 growing a graph from 10k to 40k people (a transaction touching more pages than the
write connection caches; a larger cache did not help)."""
ACTOR = Actor(agent="bench")


def schema(resolving: bool) -> dict[str, Any]:
    person: dict[str, Any] = {"merge_keys": ["name"]}
    if resolving:
        person["resolution"] = {"policy": "propose"}
    return {"nodes": {"Person": person}}


def people(population: str, count: int) -> list[str]:
    """The first ``count`` people of a population (the same prefix whatever ``count``)."""
    if population == "realistic":
        return realistic_names(count)
    return distinct_names(count, person_name)


@dataclass(frozen=True)
class Graph:
    """One graph to make at ``where``: from nothing, grown from ``grown_from`` (a kept
    graph of the same kind and fewer people), or derived from ``derived_from`` (the plain
    graph of the same people). A graph at ``where`` already, left half made by a killed
    build, is gone on with."""

    where: str
    population: str
    size: int
    resolving: bool
    grown_from: str | None = None
    derived_from: str | None = None
    batch: int = BUILD_BATCH


def make(graph: Graph) -> str:
    """Makes one graph (in a worker process: the names are made again there)."""
    names = people(graph.population, graph.size)
    if graph.derived_from is not None:
        derive(Path(graph.derived_from), Path(graph.where), names, graph.batch)
        return graph.where
    if graph.grown_from is not None and not Path(graph.where).exists():
        shutil.copyfile(graph.grown_from, graph.where)
    with bulk(), Gate.open(graph.where, default_actor=ACTOR) as gate:
        if gate.log.head()[0] == 0:
            gate.publish_schema(schema(graph.resolving))
        there = gate.log.head()[0] - 1  # people: a grown graph's, or a killed build's
        for start in range(there, len(names), graph.batch):
            items = [  # the graph is built as it is (distinct people, however alike)
                {"op": "write_node", "label": "Person", "merge_keys": {"name": n}, **CLAIM}
                | ({"resolution": "new"} if graph.resolving else {})
                for n in names[start : start + graph.batch]
            ]
            out = gate.write_batch(items=items)
            assert out.status == "written", out
    return graph.where


def derive(plain: Path, where: Path, names: list[str], batch: int = BUILD_BATCH) -> None:
    """The graph with resolution made from ``plain`` (see the module docstring): each
    ``batch`` of people's keys indexed in a transaction, as their writes would have been,
    the schema published last — a derivation killed half way is no graph with resolution
    (``made_as``), and is made again."""
    shutil.copyfile(plain, where)
    rules = parse_document(schema(True)).nodes["Person"].resolution
    assert rules is not None
    with bulk(), Gate.open(where, default_actor=ACTOR) as gate:
        conn = gate.log.connection()
        for start in range(0, len(names), batch):
            conn.execute("BEGIN IMMEDIATE")
            for name in names[start : start + batch]:
                identity = node_identity("Person", {"name": name})
                keys = matching.keys_for(rules, "Person", name, {"name": name})
                conn.execute(
                    "UPDATE state_nodes SET resolution_keys = ? WHERE identity = ?",
                    (changes._text(keys), identity),
                )
                changes._index(conn, identity, keys, None)
            conn.execute("COMMIT")
        gate.publish_schema(schema(True))


def made_as(path: Path, size: int, resolving: bool) -> str | None:
    """How a kept graph was made — ``"built"`` (its schema and ``size`` people),
    ``"derived"`` (and a second schema), ``"partial"`` (a build killed half way, which a
    make goes on with) — or None: missing, or not of its kind (a derivation killed before
    its schema was published: a copy of the plain graph)."""
    if not path.exists():
        return None
    with Gate.open(path, default_actor=ACTOR) as gate:
        head = gate.log.head()[0]
        if head == 0:
            return None
        entry = gate.current_schema().registry.get_entry("Person")
        if entry is None or (entry.resolution is not None) != resolving:
            return None
    return {1: "built", 2: "derived"}.get(head - size, "partial" if head <= size else None)


def make_all(graphs: list[Graph], jobs: int) -> None:
    """Makes ``graphs``, ``jobs`` processes at once, each once the graph it is grown or
    derived from is made."""
    if not graphs:
        return
    started = time.perf_counter()
    waiting = list(graphs)
    running: dict[Future[str], Graph] = {}
    with ProcessPoolExecutor(
        max_workers=jobs, mp_context=multiprocessing.get_context("spawn")
    ) as pool:
        while waiting or running:
            pending = {g.where for g in [*waiting, *running.values()]}
            for graph in [g for g in waiting if _source(g) not in pending]:
                waiting.remove(graph)
                running[pool.submit(make, graph)] = graph
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                future.result()
                del running[future]
    print(f"  (made {len(graphs)} graphs in {time.perf_counter() - started:,.0f} s)", flush=True)


def _source(graph: Graph) -> str | None:
    return graph.derived_from or graph.grown_from


def sqlite_graphs(
    keep: Path | None,
    scratch: Path,
    population: str,
    sizes: list[int],
    jobs: int,
    derive: bool = False,
) -> dict[int, dict[str, Path]]:
    """Each size's two SQLite graphs, made where missing: kept in ``keep`` (if given), else
    in ``scratch``. A missing graph grows from the largest smaller one of its kind (kept,
    or made first) whose people end with a whole batch."""
    home = keep or scratch
    made = {s: {m: home / f"{population}-{m}-{s}.db" for m in MODES} for s in sizes}
    how = {p: made_as(p, s, m == "propose") for s, ps in made.items() for m, p in ps.items()}
    missing: list[Graph] = []
    for size, places in sorted(made.items()):
        for mode, path in places.items():
            if how[path] in ("built", "derived"):
                continue
            resolving = mode == "propose"
            if how[path] == "partial" and not (derive and resolving):
                missing.append(Graph(str(path), population, size, resolving))  # goes on
                how[path] = "built"
                continue
            for stale in home.glob(f"{path.name}*"):
                stale.unlink()
            if derive and resolving:
                plain = str(places["off"])
                missing.append(Graph(str(path), population, size, True, derived_from=plain))
                how[path] = "derived"
                continue
            smaller = [  # built through the gate (or about to be), ending with a whole batch
                s
                for s in sorted(made)
                if s < size and s % BUILD_BATCH == 0 and how[made[s][mode]] == "built"
            ]
            if smaller:
                source = str(made[smaller[-1]][mode])
                missing.append(Graph(str(path), population, size, resolving, source))
            else:
                missing.append(Graph(str(path), population, size, resolving))
            how[path] = "built"
    make_all(missing, jobs)
    return made


def writable(kept: dict[str, Path], keep: Path | None, scratch: Path) -> dict[str, Path]:
    """The graphs a run writes into: copies of kept ones (as they were made)."""
    if keep is None:
        return dict(kept)
    copies = {mode: scratch / path.name for mode, path in kept.items()}
    for mode, path in kept.items():
        shutil.copyfile(path, copies[mode])
    return copies
