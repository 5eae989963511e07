"""Each change to the text index alone, on the data and harness of ``bench_recall.py``: the
same ``writegate search_nodes`` system over logs whose SQLite index is made and searched the
way it was before (words as written, every word of the question looked for), with one change
at a time, and with the session context on top; beside plain BM25, in one run.

The variants swap the index's tokenizer and its choice of query words for the length of a
system's run (the logs of each variant are their own), so what is measured is the gate's own
write and read path. BM25 column weights are not among them: the index has one column, and
splitting a turn's document into its label and keys and the rest, weighted 0.5 to 5 against
each other, moved recall@10 by less than a point in a plain FTS5 over the same documents.

usage: python bench/bench_recall_ablation.py [--data PATH] [--limit N]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from unittest.mock import patch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bench_recall import evaluate, table
from bench.recall_data import Conversation, DataMissing, load, locate
from bench.recall_systems import (
    KS,
    Build,
    Searcher,
    plain_bm25,
    search_nodes,
    search_nodes_in_context,
)
from writegate.projections.search import contract
from writegate.projections.search import sqlite as index

BEFORE = "unicode61 remove_diacritics 2"
STEMMED = index.TOKENIZER
WordsOf = Callable[[str], list[str]]


def _every_prefix(word: str, begins: bool = False) -> str:
    """FTS5's phrase for a search word matching every word it begins, even when it is one."""
    return '"' + word.replace('"', '""') + '"*'


def variant(
    build: Build, tokenizer: str, words: WordsOf, folder: str, phrase: Callable[..., str] | None
) -> Build:
    """``build`` with the SQLite index made with ``tokenizer`` and searching ``words``."""

    @contextmanager
    def patched(conversation: Conversation, scratch: Path) -> Iterator[Searcher]:
        tables = index.TABLES.replace(f"'{STEMMED}'", f"'{tokenizer}'")
        with ExitStack() as swapped:
            swapped.enter_context(patch.object(index, "TOKENIZER", tokenizer))
            swapped.enter_context(patch.object(index, "TABLES", tables))
            swapped.enter_context(patch.object(index, "search_words", words))
            if phrase is not None:
                swapped.enter_context(patch.object(index, "phrase", phrase))
            (scratch / folder).mkdir(exist_ok=True)
            with build(conversation, scratch / folder) as search:
                yield search

    return patched


VARIANTS: dict[str, Build] = {
    "plain BM25": plain_bm25,
    "search_nodes, before (words as written, all of them)": variant(
        search_nodes, BEFORE, contract.words, "before", None
    ),
    "  + stems only": variant(search_nodes, STEMMED, contract.words, "stems", None),
    "  + stop words left out only": variant(
        search_nodes, BEFORE, contract.search_words, "stops", None
    ),
    "  + session context only": variant(
        search_nodes_in_context, BEFORE, contract.words, "before", None
    ),
    "  + stems + stop words left out (the index now)": variant(
        search_nodes, STEMMED, contract.search_words, "now", None
    ),
    "    the same, each word matching the words it begins too": variant(
        search_nodes, STEMMED, contract.search_words, "prefixes", _every_prefix
    ),
    "  + stems + stop words left out + session context": variant(
        search_nodes_in_context, STEMMED, contract.search_words, "now", None
    ),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, help="a copy of locomo10.json, kept in the cache")
    parser.add_argument("--limit", type=int, help="ask only the first N questions")
    args = parser.parse_args()
    try:
        conversations = load(locate(args.data))
    except (DataMissing, ValueError) as missing:
        print(missing, file=sys.stderr)
        return 2
    overall, _ = evaluate(conversations, VARIANTS, args.limit)
    asked = overall["plain BM25"].asked
    header = ["system", *(f"R@{k}" for k in KS), "any@10", "MRR", "p50 ms"]
    print(f"questions asked: {asked}")
    print(table(header, [[name, *s.row()] for name, s in overall.items()]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
