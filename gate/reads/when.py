"""The time a question names: "in June", "on 29 Dec 2023", "in 2023", "last week".

A question that names a time asks about what was said then: ``named_times`` reads each
time it names (``dateparser``'s search, English) as a period — a day, a week, a month or
a year — and ``recall`` pulls the found observations said inside one, as it pulls what
mentions the people a question names. A date that names no year ("in June", "June 5")
holds in every year; a relative one ("last week", "4 years ago") is taken from when the
question is asked (a past read's ``as_of``, or now). A word that only looks like a time
is not one: a lone lowercase month ("you may") is the verb. dateparser is imported when
a question first holds a digit or a word it could read (its language data take ~0.4 s to
load, once a process); an HTTP server loads them as it starts (``warm``), beside its first
calls.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dateparser.date import DateDataParser

# what could begin a time: a digit, a month's or a day's name, a word of relative time
_MAYBE = re.compile(
    r"\d|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|mon|tue|wed|thu|fri|sat|sun"
    r"|yesterday|today|tonight|tomorrow|ago|last|next|week|month|year)",
    re.IGNORECASE,
)
_LENGTH = {"day": timedelta(days=1), "week": timedelta(days=7)}


@dataclass(frozen=True)
class Period:
    """From ``start`` (included) to ``end`` (not), in every year when ``any_year``."""

    start: datetime
    end: datetime
    any_year: bool = False

    def holds(self, moment: datetime) -> bool:
        if not self.any_year:
            return self.start <= moment < self.end
        try:
            start = self.start.replace(year=moment.year)
        except ValueError:  # 29 February, asked of a year without one
            return False
        return start <= moment < start + (self.end - self.start)


def named_times(question: str, asked_at: datetime) -> list[Period]:
    """The periods the question names, read as of ``asked_at``; none when it names none."""
    if not _MAYBE.search(question):
        return []
    from dateparser.search import search_dates  # noqa: PLC0415 - see the module's docstring

    base = asked_at.astimezone(UTC).replace(tzinfo=None)
    found = search_dates(question, languages=["en"], settings=_settings(base)) or []
    return [
        period
        for text, _ in found
        if (period := _period(text, base)) is not None and not _a_verb(text, period)
    ]


def _a_verb(text: str, period: Period) -> bool:
    """A lone lowercase month is the verb ("you may", "they march"), not the month."""
    word = text.strip()
    named = (period.end - period.start).days > 7
    return named and word.islower() and word.isalpha() and " " not in word


def _period(text: str, base: datetime) -> Period | None:
    data = _parser(base).get_date_data(text)
    if data.date_obj is None or data.period is None:
        return None
    start = data.date_obj.replace(hour=0, minute=0, second=0, microsecond=0, tzinfo=UTC)
    if data.period == "year":
        start = start.replace(month=1, day=1)
        end = start.replace(year=start.year + 1)
    elif data.period == "month":
        start = start.replace(day=1)
        end = (start + timedelta(days=32)).replace(day=1)
    elif data.period in _LENGTH:
        end = start + _LENGTH[data.period]
    else:  # a time of day: no period of what was said
        return None
    given: tuple[str, ...] = getattr(data, "parts", None) or ()  # unnamed in its stubs
    return Period(start, end, any_year="year" not in given)


@lru_cache(maxsize=4)  # one question asks one base; a parser is 1.7 ms to make
def _parser(base: datetime) -> DateDataParser:
    from dateparser.date import DateDataParser  # noqa: PLC0415

    return DateDataParser(languages=["en"], settings=_settings(base))


def _settings(base: datetime) -> dict[str, object]:
    return {
        "RELATIVE_BASE": base,
        "RETURN_TIME_AS_PERIOD": True,
        "PREFER_DAY_OF_MONTH": "first",
        "TIMEZONE": "UTC",
        "RETURN_AS_TIMEZONE_AWARE": False,
    }


def warm() -> None:
    """Load dateparser's language data now (a server, on a thread of its own), so that the
    first question naming a time is not the one that waits for them."""
    named_times("on 1 June 2024", datetime.now(UTC))
