"""What sealing personal values costs the log: appends, replays and verify, with and without.

Each event carries a person's name and city and a note; "plain" writes them in the clear,
"sealed" seals name and city (``writegate.eventlog.sealing``: a subject lookup, an HMAC and
an insert each) — one subject per event, as a log of many people has. Prints appends/s one
per transaction and in batches of 1,000, replay (``iter_replayed``, what every projection
reads) and ``verify`` in events/s, and the cost of a forgetting. Nothing asserts.

usage: python bench/bench_sealing.py [--events 20000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from writegate.eventlog import Actor, DraftEvent, EventLog, Transaction

ACTOR = Actor(agent="bench", session="bench")


def draft(tx: Transaction, i: int, sealed: bool) -> DraftEvent:
    name, city = f"person-{i}", f"city-{i % 97}"
    who = f'node:Person{{"name":"{name}"}}'
    keys: dict[str, Any]
    if sealed:
        keys = {"name": tx.seal(who, name), "city": tx.seal(who, city)}
        stream = f"node:Person~{tx.subject(who)}"
    else:
        keys, stream = {"name": name, "city": city}, f"node:{who[5:]}"
    payload = {"keys": keys, "note": "a note of ordinary length, not personal"}
    return DraftEvent("bench.person", payload, (stream,), {"source": "bench"}, {"keys": keys})


def timed(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def run(folder: Path, events: int, sealed: bool) -> dict[str, float]:
    log = EventLog(folder / f"{'sealed' if sealed else 'plain'}.db")
    singles = min(events, 3000)

    def one_each() -> None:
        for i in range(singles):
            log.append(ACTOR, emit_all(range(i, i + 1)))

    def emit_all(items: range) -> Callable[[Transaction], None]:
        def decide(tx: Transaction) -> None:
            for i in items:
                tx.emit(draft(tx, i, sealed))

        return decide

    def batches() -> None:
        for start in range(singles, events, 1000):
            log.append(ACTOR, emit_all(range(start, min(events, start + 1000))))

    numbers = {
        "append (one per tx)": singles / timed(one_each),
        "append (1,000 per tx)": (events - singles) / timed(batches),
        "replay": events / timed(lambda: sum(1 for _ in log.iter_replayed())),
        "verify": events / timed(log.verify),
    }
    if sealed:
        who = ['node:Person{"name":"person-7"}']
        numbers["forget one subject (ms)"] = 1000 * timed(
            lambda: log.forget(ACTOR, who, reason="bench")
        )
    log.close()
    return numbers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=20000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        plain = run(Path(folder), args.events, sealed=False)
        sealed = run(Path(folder), args.events, sealed=True)
    print(f"{args.events:,} events, each a name and a city (sealed: both, one subject each)")
    print(f"{'':28}{'plain':>12}{'sealed':>12}{'sealed/plain':>14}")
    for what, value in sealed.items():
        if what in plain:
            print(f"{what:28}{plain[what]:>12,.0f}{value:>12,.0f}{value / plain[what]:>14.2f}")
        else:
            print(f"{what:28}{'':>12}{value:>12,.1f}")


if __name__ == "__main__":
    main()
