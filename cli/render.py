"""How read commands print: ``--format table|json|jsonl``, values as a person reads them.

JSON is the result model exactly as the MCP tools return it (``gate.dump``), so a script
and an agent read the same shape. Tables fit the terminal (rich measures it; ``COLUMNS``
overrides) without breaking an id (``cli.tables``), and a value in a cell is plain text or
JSON — never a Python repr such as ``None`` or ``['a']``. ``--json``, on every command
with a machine format, is machine output, one JSON value a line: ``--format jsonl`` where
the command lists, else ``--format json`` (its one result, on one line).
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

import click
import orjson

if TYPE_CHECKING:
    from pydantic import BaseModel
    from rich.console import Console

FORMATS = ("table", "json", "jsonl")
_UNBOUNDED = 100_000  # columns: a piped table is as wide as its cells
_SAID = {
    "table": "table",
    "markdown": "markdown (one page)",
    "json": "json (one document)",
    "jsonl": "jsonl (one object a line)",
}


def format_option(*choices: str, default: str = "table") -> Callable[..., Any]:
    """``--format`` with the given choices (all three by default), its help saying exactly
    those, and ``--json``, the same as the machine format (``jsonl`` if it is a choice,
    else ``json``): the command sees ``fmt`` alone."""
    choices = choices or FORMATS
    people = [_SAID[c] for c in choices if c in ("table", "markdown")]
    scripts = [_SAID[c] for c in choices if c in ("json", "jsonl")]
    said = [f"{' or '.join(people)} for people"] if people else []
    said += [f"{' or '.join(scripts)} for scripts"] if scripts else []
    machine = next((c for c in ("jsonl", "json") if c in choices), None)
    formats = click.option(
        "--format",
        "fmt",
        type=click.Choice(choices),
        default=default,
        show_default=True,
        help="; ".join(said) + ".",
    )

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        if machine is None:
            return formats(command)

        @functools.wraps(command)
        def folded(*args: Any, as_json: bool = False, **kwargs: Any) -> Any:
            if as_json:
                kwargs["fmt"] = machine
            return command(*args, **kwargs)

        flag = click.option(
            "--json", "as_json", is_flag=True, help=f"The same as --format {machine}."
        )
        return formats(flag(folded))

    return decorate


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``1 write``, ``2 writes``, ``1,024 events``, ``3 batches`` (a ``plural`` given)."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"


# what a forgetting or a retention let go of, per store it counts, in words
_STORES = {
    "sealed_values": "sealed value",
    "subject_keys": "subject key",
    "search_documents": "text index document",
    "rejections": "refusal",
    "idempotency": "retry record",
    "state_facts": "fact",
    "state_nodes": "node",
    "state_relationships": "relationship",
    "state_observations": "observation",
    "state_passages": "passage",
    "state_citations": "citation",
    "state_support": "support",
    "state_node_documents": "node document",
    "state_value_counts": "value count",
    "state_resolution_keys": "resolution key",
    "state_aliases": "alias",
}


def stores_let_go(counts: Mapping[str, int]) -> str:
    """``3 sealed values, 1 subject key``: what each store let go of, in words (a store
    this does not name, by its own name)."""
    return ", ".join(
        counted(n, _STORES.get(store, store.replace("_", " ")))
        for store, n in sorted(counts.items())
    )


def withheld_line(withheld: dict[str, int] | None) -> str | None:
    """What a scoped read left out, as the table says it (``withheld`` in JSON): the
    relationships leading into each scope the grant does not hold."""
    if not withheld:
        return None
    into = ", ".join(
        f"{counted(n, 'relationship')} into {scope}" for scope, n in sorted(withheld.items())
    )
    return f"withheld (outside this grant): {into}"


def console() -> Console:
    """A console as wide as the terminal; piped (and no ``COLUMNS`` given), as wide as what
    it prints: a file or a pager gets whole lines, not a table folded at 80 columns."""
    from rich.console import Console

    piped = not sys.stdout.isatty() and not os.environ.get("COLUMNS", "").isdigit()
    return Console(width=_UNBOUNDED if piped else None)


def json_line(model: BaseModel) -> str:
    from writegate.gate import dump

    return orjson.dumps(dump(model), option=orjson.OPT_SORT_KEYS).decode()


def emit_json(model: BaseModel) -> None:
    click.echo(json_line(model))


def emit_jsonl(models: Iterable[BaseModel]) -> None:
    for model in models:
        click.echo(json_line(model))


def plain(value: Any) -> str:
    """A value for a table cell: text as it is, nothing as nothing, anything else as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


class _Confident(Protocol):
    @property
    def confidence(self) -> float: ...

    @property
    def corroborated_confidence(self) -> float | None: ...


def believed(provenance: _Confident) -> str:
    """The confidence cell: corroborated where independent sources support the fact, else
    the write's own — what the JSON answers weigh, so a table never says less."""
    corroborated = provenance.corroborated_confidence
    return plain(provenance.confidence if corroborated is None else corroborated)


def assignments(values: dict[str, Any]) -> str:
    """``name=Ada, age=36``: keys and properties in one cell."""
    return ", ".join(f"{name}={plain(value)}" for name, value in values.items())


def did_you_mean(
    word: str, names: Iterable[str] | Mapping[str, str], said: str = "; did you mean {}?"
) -> str:
    """``; did you mean Person?`` (``said`` with the suggestions) for the closest of
    ``names`` (difflib, any case), or ``""``. A mapping suggests its value for a close key:
    a synonym's canonical name."""
    from difflib import get_close_matches

    suggest = dict(names) if isinstance(names, Mapping) else {name: name for name in names}
    folded: dict[str, str] = {}
    for name, target in suggest.items():
        folded.setdefault(name.casefold(), target)
    close = get_close_matches(word.casefold(), folded, n=3, cutoff=0.6)
    found = list(dict.fromkeys(folded[name] for name in close))
    return said.format(" or ".join(found)) if found else ""
