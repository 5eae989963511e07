"""The graphs bench_resolution_gate.py writes into: distinct synthetic people, one log per
mode of the Person label — ``off`` (no resolution), ``propose`` (``resolution: {policy:
propose}``, names only) and ``evidence`` (propose, weighing a date of birth, a postcode and a
city beside the name). Every person carries the same three properties in every mode
(``details``), so what differs between the modes' writes is resolution alone.

A graph is written through the gate as an import writes one (``write_batch`` of
``BUILD_BATCH`` items, cyclic GC off), in a process of its own, ``jobs`` at once. Kept graphs (``keep``)
are reused by later runs, and a missing one grows from a kept smaller one of its kind (a
copy, then the people after it: the same batches as a build from nothing). With ``derive``,
a missing graph with resolution (either mode) is made from the plain graph of the same people
instead: copied, and its mode's schema published, which indexes every live node as its write
would have (``nodes.indexed`` events of ``gate.schema.indexing.BATCH`` nodes, the value
counts with them): the same read model as a graph written through the gate
(``tests/test_bench_resolution_graphs.py``), and a log that replays to it.
"""

from __future__ import annotations

import hashlib
import math
import multiprocessing
import shutil
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from datetime import date, timedelta
from functools import cache
from pathlib import Path
from typing import Any

from tests.resolution.synth import distinct_names, load_words, person_name, realistic_names
from writegate.eventlog import Actor
from writegate.eventlog.bulk import bulk
from writegate.gate import Gate
from writegate.gate.schema import indexing
from writegate.gate.schema.document import ResolutionDoc, parse_document

MODES = ("off", "propose", "evidence")
RESOLUTION: dict[str, dict[str, Any] | None] = {
    "off": None,
    "propose": {"policy": "propose"},
    "evidence": {
        "policy": "propose",
        "evidence": {
            "dob": {"compare": "date"},
            "postcode": {"compare": "exact"},
            "city": {"compare": "similar"},
        },
    },
}
GENERATION = 2
"""Part of a kept graph's file name, bumped when what its people hold changes (2: the
``details``), so a kept graph of older people is never taken for one of these."""
FIRST_BIRTH, LAST_BIRTH = date(1930, 1, 1), date(2005, 12, 31)
POSTCODES, CITIES = 3_000, 300
_CITY_FORMS = ("{}", "North {}", "{} Heights", "Upper {}")
CLAIM: dict[str, Any] = {"source": "bench", "extraction_method": "api", "reliability": 0.9}
BUILD_BATCH = 1_000
"""Items a batch. Larger ones are slower past 100k nodes: 10,000 took five times the wall time of
1,000 growing a graph from 10k to 40k people (a transaction touching more pages than the
write connection caches; a larger cache did not help)."""
ACTOR = Actor(agent="bench")


def schema(mode: str) -> dict[str, Any]:
    person: dict[str, Any] = {"merge_keys": ["name"]}
    if (resolution := RESOLUTION[mode]) is not None:
        person["resolution"] = resolution
    return {"nodes": {"Person": person}}


def rules(mode: str) -> ResolutionDoc | None:
    """The Person label's resolution in ``mode`` (None: off)."""
    return parse_document(schema(mode)).nodes["Person"].resolution


def details(name: str) -> dict[str, str]:
    """A person's date of birth (1930 to 2005), postcode (one of 3,000) and city (one of 300),
    from a stable hash of the name: the same in every mode and every process, so the modes
    write the same properties; uniform, so an agreeing value is about as rare as in a
    country's register and a new person's values mostly disagree with its near-namesakes'."""
    h = int.from_bytes(hashlib.blake2b(name.encode(), digest_size=8).digest(), "big")
    h, days = divmod(h, (LAST_BIRTH - FIRST_BIRTH).days + 1)
    h, postcode = divmod(h, POSTCODES)
    return {
        "dob": (FIRST_BIRTH + timedelta(days=days)).isoformat(),
        "postcode": f"{1000 + postcode}",
        "city": _cities()[h % CITIES],
    }


@cache
def _cities() -> tuple[str, ...]:
    places = load_words().places
    made = [form.format(p) for form in _CITY_FORMS for p in places]
    assert len(made) >= CITIES, "fewer places than cities"
    return tuple(made[:CITIES])


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
    mode: str
    grown_from: str | None = None
    derived_from: str | None = None
    batch: int = BUILD_BATCH


def make(graph: Graph) -> str:
    """Makes one graph (in a worker process: the names are made again there)."""
    if graph.derived_from is not None:
        derive(Path(graph.derived_from), Path(graph.where), graph.mode)
        return graph.where
    names = people(graph.population, graph.size)
    if graph.grown_from is not None and not Path(graph.where).exists():
        shutil.copyfile(graph.grown_from, graph.where)
    with bulk(), Gate.open(graph.where, default_actor=ACTOR) as gate:
        if gate.log.head()[0] == 0:
            gate.publish_schema(schema(graph.mode))
        there = gate.log.head()[0] - 1  # people: a grown graph's, or a killed build's
        new = {"resolution": "new"} if RESOLUTION[graph.mode] else {}
        for start in range(there, len(names), graph.batch):
            items = [  # the graph is built as it is (distinct people, however alike)
                {"op": "write_node", "label": "Person", "merge_keys": {"name": n}, **CLAIM}
                | {"properties": details(n)}
                | new
                for n in names[start : start + graph.batch]
            ]
            out = gate.write_batch(items=items)
            assert out.status == "written", out
    return graph.where


def derive(plain: Path, where: Path, mode: str) -> None:
    """The graph of ``mode`` made from ``plain`` (see the module docstring); a derivation
    killed before its schema is published is a copy of the plain graph (``made_as``: none),
    and is made again."""
    shutil.copyfile(plain, where)
    with bulk(), Gate.open(where, default_actor=ACTOR) as gate:
        out = gate.publish_schema(schema(mode))
        assert getattr(out, "status", None) == "published", out


def made_as(path: Path, size: int, mode: str) -> str | None:
    """How a kept graph was made — ``"built"`` (its schema and ``size`` people),
    ``"derived"`` (and a second schema, with the events indexing its people), ``"partial"``
    (a build killed half way, which a make goes on with) — or None: missing, or not of its
    mode (a derivation killed before its schema was published: a copy of the plain graph)."""
    if not path.exists():
        return None
    with Gate.open(path, default_actor=ACTOR) as gate:
        head = gate.log.head()[0]
        if head == 0:
            return None
        entry = gate.current_schema().registry.get_entry("Person")
        if entry is None or entry.resolution != rules(mode):
            return None
    indexed = 2 + math.ceil(size / indexing.BATCH)
    return {1: "built", indexed: "derived"}.get(head - size, "partial" if head <= size else None)


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
    modes: tuple[str, ...] = MODES,
) -> dict[int, dict[str, Path]]:
    """Each size's SQLite graph of the plain mode and of each of ``modes``, made where
    missing: kept in ``keep`` (if given), else in ``scratch``. A missing graph grows from
    the largest smaller one of its mode (kept, or made first) whose people end with a whole
    batch."""
    home = keep or scratch
    wanted = [m for m in MODES if m == "off" or m in modes]
    made = {s: {m: home / f"{population}-{m}-{s}.v{GENERATION}.db" for m in wanted} for s in sizes}
    how = {p: made_as(p, s, m) for s, ps in made.items() for m, p in ps.items()}
    missing: list[Graph] = []
    for size, places in sorted(made.items()):
        for mode, path in places.items():
            if how[path] in ("built", "derived"):
                continue
            resolving = RESOLUTION[mode] is not None
            if how[path] == "partial" and not (derive and resolving):
                missing.append(Graph(str(path), population, size, mode))  # goes on
                how[path] = "built"
                continue
            for stale in home.glob(f"{path.name}*"):
                stale.unlink()
            if derive and resolving:
                plain = str(places["off"])
                missing.append(Graph(str(path), population, size, mode, derived_from=plain))
                how[path] = "derived"
                continue
            smaller = [  # built through the gate (or about to be), ending with a whole batch
                s
                for s in sorted(made)
                if s < size and s % BUILD_BATCH == 0 and how[made[s][mode]] == "built"
            ]
            if smaller:
                source = str(made[smaller[-1]][mode])
                missing.append(Graph(str(path), population, size, mode, source))
            else:
                missing.append(Graph(str(path), population, size, mode))
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
