"""N-Triples terms written as text are the terms rdflib writes, value for value."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta, timezone
from urllib.parse import quote

from hypothesis import given
from hypothesis import strategies as st
from rdflib import Graph, Literal, URIRef

from writegate.eventlog.events import format_timestamp
from writegate.projections import ntriples as nt

DOUBLE, DATETIME = URIRef(f"{nt.XSD}double"), URIRef(f"{nt.XSD}dateTime")
# rdflib writes a line break in Turtle's triple quotes, which N-Triples lacks: apart
no_line_breaks = st.text().filter(lambda text: "\n" not in text)


@given(no_line_breaks)
def test_strings(text: str) -> None:
    assert nt.string(text) == Literal(text).n3()
    assert nt.literal(text) == Literal(text).n3()


@given(st.text())
def test_a_string_with_any_character_parses_back_to_itself(text: str) -> None:
    """Line breaks included: the one place the text differs from rdflib's, which would not
    parse as N-Triples."""
    line = f"<urn:s> <urn:p> {nt.string(text)} .\n"
    [(_, _, value)] = list(Graph().parse(data=line, format="nt"))
    assert value == Literal(text)


@given(st.integers())
def test_integers(value: int) -> None:
    assert nt.literal(value) == nt.integer(value) == Literal(value).n3()


@given(st.floats())
def test_doubles(value: float) -> None:
    expected = Literal(value, datatype=DOUBLE).n3()
    assert nt.literal(value) == expected, value
    if math.isfinite(value):
        assert nt.double(value) == expected


def test_booleans_and_none() -> None:
    assert nt.literal(True) == Literal(True).n3()
    assert nt.literal(False) == Literal(False).n3()
    assert nt.literal(None) == Literal(None).n3()


@given(
    st.datetimes(
        min_value=datetime(1000, 1, 1), max_value=datetime(9999, 1, 1), timezones=st.just(UTC)
    ),
    st.sampled_from([UTC, timezone(timedelta(hours=5, minutes=30)), None]),
    st.booleans(),
)
def test_date_times(moment: datetime, zone: timezone | None, whole_second: bool) -> None:
    """As rdflib normalizes the gate's timestamp text: UTC, no fraction when it is 0."""
    if whole_second:
        moment = moment.replace(microsecond=0)
    moment = moment.astimezone(zone) if zone else moment.replace(tzinfo=None)
    expected = Literal(format_timestamp(moment), datatype=DATETIME).n3()
    assert nt.date_time(moment) == expected


@given(st.text())
def test_names_are_percent_encoded_whole(value: str) -> None:
    assert nt.percent_encoded(value) == quote(value, safe="")
    assert (
        nt.name("urn:writegate:", "node", value)
        == URIRef(f"urn:writegate:node/{quote(value, safe='')}").n3()
    )
