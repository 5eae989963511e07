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
  * on synthetic lists of distinct names (tests/resolution/synth.py; 100k of each kind by
    default): keys per name, block sizes (p50/p99/largest, with the largest key) and the mean
    number of names one probe returns (the sum of the blocks of a name's keys).
Nothing here asserts: numbers are for reading.

usage: python bench/bench_resolution.py [--names 100000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.resolution.make_pairs import PAIRS  # noqa: E402
from tests.resolution.synth import (  # noqa: E402
    Words,
    distinct_names,
    organisation_name,
    person_name,
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
            f"  {'candidates ' + name:24} recall {candidate_recall(group):.3f} (true pairs sharing a blocking key)"
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


def blocks(count: int) -> None:
    print(f"\nblocks on {count:,} distinct synthetic names per kind")
    makers: tuple[tuple[Kind, Callable[[Words, random.Random], str]], ...] = (
        ("person", person_name),
        ("organisation", organisation_name),
    )
    for kind, make in makers:
        names = distinct_names(count, make)
        keys_of = [blocking_keys(name, kind) for name in names]
        sizes = Counter(key for keys in keys_of for key in keys)
        ordered = sorted(sizes.values())
        largest, size = sizes.most_common(1)[0]
        probe = statistics.mean(sum(sizes[k] - 1 for k in keys) for keys in keys_of)
        print(
            f"  {kind:12} keys/name {statistics.mean(len(k) for k in keys_of):.2f}  "
            f"blocks {len(sizes):,}  p50 {ordered[len(ordered) // 2]}  "
            f"p99 {percentile([float(s) for s in ordered], 99):.0f}  "
            f"largest {size} ({largest})  names per probe: mean {probe:.1f}"
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
    blocks(args.names)


if __name__ == "__main__":
    main()
