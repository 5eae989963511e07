"""The process a test starts for a forked ``writegate`` (``tests.forked``): standard library
only, run with ``-I -S``, so it is up in milliseconds.

It hands the zygote listening on ``argv[1]`` its stdin, stdout and stderr, the rest of its
arguments, its environment and its folder; passes on the signals it is sent to the server
the zygote forked; and exits as that server did — with its code, or by its signal.

usage: python -I -S tests/forked_relay.py SOCKET WRITEGATE-ARGS...
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys

FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1)
LOST = 70  # EX_SOFTWARE: the zygote went away without saying how the server ended


def main() -> None:
    path, args = sys.argv[1], sys.argv[2:]
    # a signal sent before the server's pid is known waits, and is passed on once it is
    signal.pthread_sigmask(signal.SIG_BLOCK, FORWARDED)
    said = os.dup(2)  # our own last word, should the zygote fail us
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(path)
    socket.send_fds(conn, [b"\0"], [0, 1, 2])
    request = {"args": args, "env": dict(os.environ), "cwd": os.getcwd()}
    conn.sendall(json.dumps(request).encode() + b"\n")
    # the server holds the streams now: copies kept here would keep its pipes open after it
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    reader = conn.makefile("r")
    pid = int(reader.readline().split()[1])
    for number in FORWARDED:
        signal.signal(number, lambda n, _frame: os.kill(pid, n))
    signal.pthread_sigmask(signal.SIG_UNBLOCK, FORWARDED)
    ended = reader.readline().split()
    if not ended:
        os.write(said, b"tests.forked: the zygote went away before its server ended\n")
        sys.exit(LOST)
    status = int(ended[1])
    if os.WIFSIGNALED(status):
        killed = os.WTERMSIG(status)
        signal.signal(killed, signal.SIG_DFL)
        os.kill(os.getpid(), killed)
    sys.exit(os.waitstatus_to_exitcode(status))


if __name__ == "__main__":
    main()
