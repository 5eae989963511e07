"""The options every write command declares: its provenance (the gate computes the rest),
the observations it cites, and when the fact holds (valid time)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from writegate.cli.common import parse_time


def provenance_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """The provenance every write declares (the gate computes the rest)."""
    for option in reversed(
        [
            click.option("--source", required=True, help="Where the claim came from."),
            click.option(
                "--method",
                "extraction_method",
                required=True,
                help="Extraction method (default formula: api, parsed, manual, llm).",
            ),
            click.option(
                "--reliability",
                type=click.FloatRange(0, 1),
                default=0.5,
                show_default=True,
                help="How far the source is trusted, 0 to 1.",
            ),
            click.option(
                "--if-version", type=int, help="Reject unless the target is at this version."
            ),
            click.option("--idempotency-key", help="Retrying with the same key appends nothing."),
        ]
    ):
        f = option(f)
    return f


def cites_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """The observations a fact was extracted from (``writegate observe`` printed their ids)."""
    return click.option(
        "--observation",
        "observations",
        multiple=True,
        metavar="ID",
        help="An observation this was extracted from (repeatable).",
    )(f)


def valid_time_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """When the written fact holds in the world (valid time; the log stamps record time)."""
    f = click.option(
        "--valid-to", callback=parse_time, help="When it stopped being true (ISO 8601)."
    )(f)
    return click.option(
        "--valid-from",
        callback=parse_time,
        help="When the fact became true (ISO 8601; default: when written).",
    )(f)
