"""Entity resolution (gate/resolution) against its labelled fixture, and what it costs.

Prints:
  * the fixture (fixtures/resolution/pairs.jsonl) by kind, label and half;
  * the shipped thresholds, and the ones ``tune`` picks from the tuning half (they must agree:
    the held-out half played no part in choosing them);
  * for ``propose`` and ``auto`` at the shipped thresholds: precision and recall, overall and
    per kind, on the held-out half (the numbers to quote) and on the whole fixture; and the
    candidate step's recall: the share of true pairs that share a blocking key. A pair counts
    as proposed or merged only if it is a candidate, as in the gate;
  * the cost of one scored pair (µs, p50/p99): from raw names, and from names already
    normalized (what the gate pays per candidate once the written name is normalized);
  * the candidate step in a graph: each true pair's one name among 100k distinct synthetic
    others (tests/resolution/synth.py: realistic and dense people, organisations), the other
    written, both orders — whether the bounded probes (``WINDOW`` rows a range, at most
    ``MAX_SCORED`` scored) still find it, and the rows a probe reads.
Nothing here asserts: numbers are for reading.

usage: python bench/bench_resolution.py [--names 100000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import bisect
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rapidfuzz import fuzz, process  # noqa: E402

from tests.resolution.make_pairs import PAIRS  # noqa: E402
from tests.resolution.synth import (  # noqa: E402
    distinct_names,
    organisation_name,
    person_name,
    realistic_names,
)
from writegate.gate.resolution import (  # noqa: E402
    DEFAULT_THRESHOLDS,
    Kind,
    blocking_keys,
    normalize,
    score,
    score_normalized,
)
from writegate.gate.resolution.evaluate import (  # noqa: E402
    LabelledPair,
    Policy,
    Scored,
    candidate_recall,
    counts,
    parse_pairs,
    score_pairs,
    split_of,
    tune,
)
from writegate.gate.resolution.keys import probes_of  # noqa: E402
from writegate.gate.resolution.matching import MAX_SCORED, WINDOW  # noqa: E402

KINDS: tuple[Kind, ...] = ("person", "organisation")


def percentile(samples: list[float], q: int) -> float:
    return statistics.quantiles(samples, n=100, method="inclusive")[q - 1]


def describe(pairs: Sequence[LabelledPair]) -> None:
    tally = Counter((p.kind, p.same, split_of(p)) for p in pairs)
    print(f"fixture: {len(pairs)} pairs ({PAIRS.relative_to(ROOT)})")
    for kind in KINDS:
        for same in (True, False):
            row = ", ".join(f"{split} {tally[kind, same, split]}" for split in ("tune", "holdout"))
            print(f"  {kind:12} {'same' if same else 'different':9} {row}")


def quality(title: str, items: Sequence[Scored]) -> None:
    print(f"\n{title} ({len(items)} pairs)")
    print(f"  {'':24} {'precision':>9} {'recall':>7} {'tp':>5} {'fp':>4} {'fn':>4}")
    groups = [("all", list(items))] + [(k, [i for i in items if i.pair.kind == k]) for k in KINDS]
    policies: tuple[tuple[Policy, float], ...] = (
        ("propose", DEFAULT_THRESHOLDS.propose),
        ("auto", DEFAULT_THRESHOLDS.auto),
    )
    for policy, threshold in policies:
        for name, group in groups:
            c = counts(group, policy, threshold)
            label = f"{policy} >= {threshold:.2f} {name}"
            print(
                f"  {label:24} {c.precision:9.3f} {c.recall:7.3f} {c.true_pos:5} {c.false_pos:4} {c.false_neg:4}"
            )
    for name, group in groups:
        print(
            f"  {'candidates ' + name:24} recall {candidate_recall(group):.3f} (true pairs compared)"
        )


def timed(calls: Sequence[Callable[[], object]], repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        for call in calls:
            started = time.perf_counter_ns()
            call()
            samples.append((time.perf_counter_ns() - started) / 1000)
    return samples


def cost(pairs: Sequence[LabelledPair], repeat: int) -> None:
    raw = [lambda p=p: score(p.a, p.b, p.kind) for p in pairs]
    normal = [(normalize(p.a, p.kind), normalize(p.b, p.kind), p.kind) for p in pairs]
    ready = [lambda n=n: score_normalized(*n) for n in normal]
    keys = [lambda p=p: blocking_keys(p.a, p.kind) for p in pairs]
    print(f"\ncost ({len(pairs)} fixture pairs x {repeat})")
    for name, calls in (
        ("score(raw names)", raw),
        ("score_normalized", ready),
        ("blocking_keys(name)", keys),
    ):
        samples = timed(calls, repeat)
        print(
            f"  {name:22} p50 {percentile(samples, 50):6.1f} µs   p99 {percentile(samples, 99):6.1f} µs"
        )


Row = tuple[str, str]


def _read(rows: list[Row], start: str, stop: str, descending: bool) -> list[Row]:
    """What ``StateReader.resolution_candidates`` reads of one range, on a sorted list."""
    lo, hi = bisect.bisect_left(rows, (start,)), bisect.bisect_left(rows, (stop,))
    if descending:
        return rows[max(lo, hi - WINDOW) : hi][::-1]
    return rows[lo : min(hi, lo + WINDOW)]


def _found(graph: list[Row], extra: list[Row], written: str, kind: Kind) -> tuple[set[str], int]:
    """The identities the gate would score for ``written`` in ``graph`` + ``extra``, and the
    rows its probe read."""
    normal = normalize(written, kind)
    texts: dict[str, str] = {}
    read = 0
    for start, stop, down in probes_of(normal, kind):
        both = sorted(_read(graph, start, stop, down) + _read(extra, start, stop, down))
        hits = (both[-WINDOW:][::-1]) if down else both[:WINDOW]
        read += len(hits)
        for key, identity in hits:
            texts.setdefault(identity, key.split("|", 3)[3])
    if len(texts) > MAX_SCORED:
        ranked = process.extract(normal.text, texts, scorer=fuzz.ratio, limit=MAX_SCORED)
        return {identity for _, _, identity in ranked}, read
    return set(texts), read


def in_a_graph(pairs: Sequence[LabelledPair], count: int) -> None:
    """The candidate step at the size of a real graph: each true pair's first name among
    ``count`` others, the second written (and the other way round); a pair is found if the
    gate would score it (bounded probes, at most ``MAX_SCORED`` candidates)."""
    print(f"\ncandidates in a graph of {count:,} other names (each true pair, both orders)")
    makers: tuple[tuple[str, Kind, Callable[[], list[str]]], ...] = (
        ("person, realistic", "person", lambda: realistic_names(count)),
        ("person, dense", "person", lambda: distinct_names(count, person_name)),
        ("organisation", "organisation", lambda: distinct_names(count, organisation_name)),
    )
    for title, kind, make in makers:
        graph = sorted(
            (key, str(i)) for i, name in enumerate(make()) for key in blocking_keys(name, kind)
        )
        same = [p for p in pairs if p.kind == kind and p.same]
        found, reads, scored = 0, list[int](), list[int]()
        for pair in same:
            hit = True
            for held, written in ((pair.a, pair.b), (pair.b, pair.a)):
                extra = sorted((key, "held") for key in blocking_keys(held, kind))
                ids, read = _found(graph, extra, written, kind)
                hit, reads, scored = hit and "held" in ids, [*reads, read], [*scored, len(ids)]
            found += hit
        print(
            f"  {title:18} recall {found / len(same):.3f}  rows read a probe: mean "
            f"{statistics.mean(reads):.1f} max {max(reads)}  scored: mean "
            f"{statistics.mean(scored):.1f} max {max(scored)}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--names", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    pairs = parse_pairs(PAIRS.read_text(encoding="utf-8"))
    describe(pairs)
    scored = score_pairs(pairs)
    tuned = tune([s for s in scored if split_of(s.pair) == "tune"])
    print(
        f"\nshipped thresholds: auto {DEFAULT_THRESHOLDS.auto:.2f}, propose {DEFAULT_THRESHOLDS.propose:.2f}"
    )
    print(
        f"tuned on the tuning half: auto {tuned.auto:.2f}, propose {tuned.propose:.2f}"
        f" ({'the same' if tuned == DEFAULT_THRESHOLDS else 'DIFFERENT: re-tune'})"
    )
    quality("held-out half", [s for s in scored if split_of(s.pair) == "holdout"])
    quality("whole fixture (the tuning half included)", scored)
    cost(pairs, args.repeat)
    in_a_graph(pairs, args.names)


if __name__ == "__main__":
    main()
