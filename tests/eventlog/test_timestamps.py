"""Timestamps have one spelling, since they are hashed: UTC, microseconds, ``Z``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from writegate.eventlog.events import format_timestamp, parse_timestamp

zones = st.one_of(
    st.none(),
    st.just(UTC),
    st.integers(min_value=-14 * 60, max_value=14 * 60).map(
        lambda minutes: timezone(timedelta(minutes=minutes))
    ),
)


@given(st.datetimes(min_value=datetime(1001, 1, 2), max_value=datetime(9998, 12, 30)), zones)
def test_the_spelling_is_strftimes_and_reads_back(moment: datetime, zone: timezone | None) -> None:
    moment = moment.replace(tzinfo=zone)
    utc = moment.replace(tzinfo=UTC) if zone is None else moment.astimezone(UTC)
    text = format_timestamp(moment)
    assert text == utc.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    assert parse_timestamp(text) == utc


def test_whole_seconds_keep_their_microseconds() -> None:
    assert format_timestamp(datetime(2031, 3, 1, 12, tzinfo=UTC)) == "2031-03-01T12:00:00.000000Z"
