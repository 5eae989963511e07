"""The relay's round-trip count (``tests.roundtrips``) on the message sequences psycopg's
pipeline sends, fed as the relay sees them: in chunks, the server's answers between."""

from __future__ import annotations

import struct

from tests.roundtrips import _Turn


def message(kind: bytes, body: bytes = b"") -> bytes:
    return kind + struct.pack("!i", len(body) + 4) + body


UNNAMED_BIND = message(b"B", b"\0\0\0\0\0\0\0\0")
PARSE_BIND_EXECUTE = message(b"P", b"\0q\0\0\0") + UNNAMED_BIND + message(b"E", b"\0\0\0\0\0")
SYNC, FLUSH = message(b"S"), message(b"H")
ROW, READY = message(b"D", b"row"), message(b"Z", b"I")


def started() -> _Turn:
    turn = _Turn()
    assert not turn.client(struct.pack("!ii", 8, 196608))  # opening is not counted
    turn.server(message(b"R", b"\0\0\0\0") + READY)
    return turn


def test_a_pipeline_then_its_sync_is_one_round_trip() -> None:
    turn = started()
    assert turn.client(PARSE_BIND_EXECUTE * 3)
    assert not turn.client(PARSE_BIND_EXECUTE + SYNC)
    turn.server(ROW * 4 + READY)
    assert turn.client(PARSE_BIND_EXECUTE)  # the next one, once answered


def test_a_flush_sent_after_the_sync_while_the_first_answers_arrive_is_the_same_wait() -> None:
    """psycopg leaves a pipeline with a Sync, then a Flush if answers are still due; on a
    busy machine the server's first answers come between the two."""
    turn = started()
    assert turn.client(PARSE_BIND_EXECUTE * 100 + SYNC)
    turn.server(ROW * 50)
    assert not turn.client(FLUSH)
    turn.server(ROW * 50 + READY)
    assert turn.client(PARSE_BIND_EXECUTE)


def test_a_pipelined_read_waits_for_its_flush_to_be_answered() -> None:
    turn = started()
    assert turn.client(PARSE_BIND_EXECUTE + FLUSH)
    turn.server(ROW)
    assert turn.client(PARSE_BIND_EXECUTE + SYNC)  # the second round trip
    turn.server(READY)
    assert turn.client(PARSE_BIND_EXECUTE)


def test_messages_split_across_chunks_are_read_whole() -> None:
    turn = started()
    sent = PARSE_BIND_EXECUTE + SYNC
    assert turn.client(sent[:7])
    assert not turn.client(sent[7:])
    turn.server(READY[:3])
    assert not turn.answered  # the ReadyForQuery has not come whole
    turn.server(READY[3:])
    assert turn.client(PARSE_BIND_EXECUTE)


def test_an_encryption_request_is_answered_by_one_byte() -> None:
    turn = _Turn()
    assert not turn.client(struct.pack("!ii", 8, 80877104))  # GSS encryption request
    turn.server(b"N")
    assert not turn.client(struct.pack("!ii", 8, 196608))
    turn.server(message(b"R", b"\0\0\0\0") + READY)
    assert turn.client(PARSE_BIND_EXECUTE + SYNC)


def test_a_flush_sent_after_the_sync_was_answered_is_no_new_wait() -> None:
    """The client had not read the ReadyForQuery already sent when it added its Flush."""
    turn = started()
    assert turn.client(PARSE_BIND_EXECUTE * 3 + SYNC)
    turn.server(ROW * 3 + READY)
    assert not turn.client(FLUSH)
    assert turn.client(PARSE_BIND_EXECUTE)  # the next append: one round trip each


def test_opening_a_connection_is_not_counted() -> None:
    """The pool opens connections in the background, whenever; a password exchange too."""
    turn = _Turn()
    assert not turn.client(struct.pack("!ii", 8, 196608))
    turn.server(message(b"R", b"\0\0\0\x05salt"))  # asks for an MD5 password
    assert not turn.client(message(b"p", b"md5..."))
    turn.server(message(b"R", b"\0\0\0\0") + message(b"S", b"a\0b\0") + READY)
    assert turn.client(PARSE_BIND_EXECUTE + SYNC)  # the connection's first round trip


def test_the_statements_run_are_read_from_their_parse_and_bind() -> None:
    turn = started()
    named = message(b"P", b"s1\0SELECT 2\0\0\0") + message(b"B", b"\0s1\0\0\0\0\0\0\0")
    unnamed = message(b"P", b"\0SELECT 1\0\0\0") + UNNAMED_BIND
    turn.client(unnamed + named + message(b"B", b"\0s1\0\0\0\0\0\0\0") + SYNC)
    turn.client(message(b"Q", b"COMMIT\0"))
    assert turn.ran == ["SELECT 1", "SELECT 2", "SELECT 2", "COMMIT"]
