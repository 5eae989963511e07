"""N-Triples terms written as text, the way rdflib's ``n3()`` writes them.

The PROV-O projection writes some twenty-five triples per event; building rdflib terms and
asking each for ``n3()`` cost more than everything else in a rebuild together. These
functions produce the same text from plain Python values (``tests/projections/test_ntriples``
checks them against rdflib term by term), except for one thing rdflib gets wrong for
N-Triples: a string holding a line break, which rdflib writes in Turtle's triple quotes and
N-Triples does not allow, is written here with ``\\n`` escapes.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

XSD = "http://www.w3.org/2001/XMLSchema#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
PROV = "http://www.w3.org/ns/prov#"

_INTEGER = f"^^<{XSD}integer>"
_DOUBLE = f"^^<{XSD}double>"
_DATETIME = f"^^<{XSD}dateTime>"
TRUE = f'"true"^^<{XSD}boolean>'
FALSE = f'"false"^^<{XSD}boolean>'


def uri(text: str) -> str:
    """``<text>`` (``text`` must already be a valid IRI: see ``name``)."""
    return f"<{text}>"


# ``quote(text, safe="")`` for ASCII text, as one ``str.translate`` (a fifth of the time)
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~")
_QUOTED = {code: f"%{code:02X}" for code in range(128) if chr(code) not in _UNRESERVED}


def percent_encoded(value: str) -> str:
    """``urllib.parse.quote(value, safe="")``: every byte but the unreserved ones as %XX."""
    return value.translate(_QUOTED) if value.isascii() else quote(value, safe="")


def name(base: str, kind: str, value: str) -> str:
    """``<{base}{kind}/{value}>`` with ``value`` percent-encoded whole, as the projection
    names its resources."""
    return f"<{base}{kind}/{percent_encoded(value)}>"


def string(text: str) -> str:
    """A plain literal: backslash, quote, CR and LF escaped."""
    if "\\" in text:
        text = text.replace("\\", "\\\\")
    if '"' in text:
        text = text.replace('"', '\\"')
    if "\r" in text:
        text = text.replace("\r", "\\r")
    if "\n" in text:
        text = text.replace("\n", "\\n")
    return f'"{text}"'


def integer(value: int) -> str:
    return f'"{value}"{_INTEGER}'


def double(value: float) -> str:
    text = repr(value)
    if text[-1] in "fn":  # inf, -inf, nan: XSD spells them INF, -INF, NaN
        text = text.replace("inf", "INF").replace("nan", "NaN")
    return f'"{text}"{_DOUBLE}'


def date_time(moment: datetime) -> str:
    """An ``xsd:dateTime`` in UTC, as rdflib normalizes one (no fraction when it is 0)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    elif moment.tzinfo is not UTC:
        moment = moment.astimezone(UTC)
    return f'"{moment.isoformat()}"{_DATETIME}'


def literal(value: Any) -> str:
    """What ``rdflib.Literal(value)`` writes, floats as ``xsd:double`` (anything else: its
    ``str``, as a plain literal)."""
    if isinstance(value, str):
        return string(value)
    if value is True:
        return TRUE
    if value is False:
        return FALSE
    if isinstance(value, int):
        return integer(value)
    if isinstance(value, float):
        return double(value)
    return string(str(value))
