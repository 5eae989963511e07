"""What an operator sees of a running server: its log lines and its metrics.

Log lines go to stderr (stdout is the MCP wire under stdio), plain or as JSON objects
(``python-json-logger``), one per event worth knowing: a refused write at ``info`` with
the agent and code, an internal failure once at ``error`` with its traceback. Metrics
are Prometheus' (``prometheus-client``), in a registry of the server's own; the projections'
checkpoints are asked in threads of their own, so a store that never answers costs a scrape
a bounded wait and nobody else anything.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from typing import Literal

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from pythonjsonlogger.core import RESERVED_ATTRS
from pythonjsonlogger.json import JsonFormatter

LogFormat = Literal["plain", "json"]
LOG_FORMATS: tuple[LogFormat, ...] = ("plain", "json")
LOG_LEVELS = ("debug", "info", "warning", "error")
PLAIN = "%(asctime)s %(levelname)s %(name)s: %(message)s"

log = logging.getLogger("writegate.server")


_handler = logging.StreamHandler(sys.stderr)  # the one every logger of the server writes to


def configure_logging(level: str = "warning", fmt: LogFormat = "plain") -> None:
    """One handler on stderr for writegate's and the web server's loggers."""
    if fmt == "json":
        # uvicorn's records carry ``color_message`` (the message with ANSI colours) as an
        # extra, which the JSON formatter would write out like any other
        skipped = [*RESERVED_ATTRS, "color_message"]
        formatter: logging.Formatter = JsonFormatter(
            "%(asctime)s %(levelname)s %(name)s %(message)s",
            timestamp=True,
            reserved_attrs=skipped,
        )
    else:
        formatter = logging.Formatter(PLAIN)
    _handler.setFormatter(formatter)
    for name in ("writegate", "uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        logger.handlers = [_handler]
        logger.setLevel(level.upper())
        logger.propagate = False


def say(message: str, *, level: int = logging.INFO) -> None:
    """A line for the operator at start (where the server listens, what it warns of),
    whatever the log level: as it is in plain logs (a warning prefixed ``warning:``), a
    JSON object like every other line in JSON logs."""
    if isinstance(_handler.formatter, JsonFormatter):
        record = logging.LogRecord("writegate.serve", level, __file__, 0, message, None, None)
        sys.stderr.write(_handler.format(record) + "\n")
    else:
        prefix = f"{logging.getLevelName(level).lower()}: " if level >= logging.WARNING else ""
        sys.stderr.write(prefix + message + "\n")
    sys.stderr.flush()


class Checkpoints:
    """Each projection's checkpoint, for the lag ``/metrics`` shows. Every store is asked in
    a worker thread and never twice at once; a scrape waits at most ``wait`` seconds for
    the answers, and a store that failed or is still being asked is unreachable (``None``),
    logged once when it goes down and once when it is back."""

    def __init__(self, askers: Mapping[str, Callable[[], int]], wait: float = 1.0) -> None:
        self._askers = dict(askers)
        self._wait = wait
        self._pool = ThreadPoolExecutor(max(len(askers), 1), thread_name_prefix="writegate-lag")
        self._asked: dict[str, Future[int]] = {}
        self._down: dict[str, str] = {}
        self._lock = threading.Lock()

    def read(self) -> dict[str, int | None]:
        with self._lock:
            for name, ask in self._askers.items():
                asked = self._asked.get(name)
                if asked is None or asked.done():
                    self._asked[name] = self._pool.submit(ask)
            pending = dict(self._asked)
        wait(pending.values(), timeout=self._wait)
        return {name: self._answer(name, future) for name, future in pending.items()}

    def _answer(self, name: str, future: Future[int]) -> int | None:
        if not future.done():
            error = f"no answer within {self._wait:g} s"
        elif (exc := future.exception()) is not None:
            error = " ".join(str(exc).split()) or type(exc).__name__
        else:
            with self._lock:
                if self._down.pop(name, None) is not None:
                    log.warning("projection %s reachable again", name)
            return future.result()
        with self._lock:
            if name not in self._down:
                log.warning("projection %s unreachable: %s", name, error)
            self._down[name] = error
        return None


class Metrics:
    """The server's counters, histograms and gauges, and their text exposition."""

    def __init__(self, checkpoints: Checkpoints | None = None) -> None:
        self.registry = CollectorRegistry()
        self.calls = Counter(
            "writegate_tool_calls",
            "Tool calls by tool, agent and outcome (ok, rejected, error).",
            ["tool", "agent", "outcome"],
            registry=self.registry,
        )
        self.rejections = Counter(
            "writegate_rejections",
            "Refused writes by error code and agent.",
            ["code", "agent"],
            registry=self.registry,
        )
        self.seconds = Histogram(
            "writegate_tool_seconds",
            "Time to answer a tool call.",
            ["tool"],
            buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 5.0),
            registry=self.registry,
        )
        self.head = Gauge("writegate_log_head_seq", "The log's head seq.", registry=self.registry)
        self.lag = Gauge(
            "writegate_projection_lag",
            "Events the projection is behind the log (NaN: unreachable).",
            ["projection"],
            registry=self.registry,
        )
        self.up = Gauge(
            "writegate_projection_up",
            "1: the projection's store answered this scrape; 0: it could not be reached.",
            ["projection"],
            registry=self.registry,
        )
        self.sessions = Gauge(
            "writegate_http_sessions",
            "Streamable HTTP sessions the server holds (2025 wire; the 2026 wire has none).",
            registry=self.registry,
        )
        self.jobs_by_state = Gauge(
            "writegate_jobs",
            "Jobs recorded in the log's database by state (running, interrupted, completed, "
            "failed, cancelled).",
            ["state"],
            registry=self.registry,
        )
        self._checkpoints = checkpoints
        self.open_sessions: Callable[[], int] | None = None  # set by the server that counts
        self.jobs: Callable[[], dict[str, int]] | None = None  # set by a server running jobs

    @contextmanager
    def timed(self, tool: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.seconds.labels(tool).observe(time.perf_counter() - started)

    def outcome(self, tool: str, agent: str, outcome: str, code: str | None = None) -> None:
        self.calls.labels(tool, agent, outcome).inc()
        if code is not None:
            self.rejections.labels(code, agent).inc()

    def exposition(self, head: Callable[[], int]) -> bytes:
        """The text a Prometheus scrape reads, with the gauges read now (blocking: call it
        off the event loop). The checkpoints are read before the head, so a live log's
        lag is never negative."""
        checkpoints = self._checkpoints.read() if self._checkpoints is not None else {}
        seq = head()
        self.head.set(seq)
        if self.open_sessions is not None:
            self.sessions.set(self.open_sessions())
        if self.jobs is not None:
            counted = self.jobs()
            for state in ("running", "interrupted", "completed", "failed", "cancelled"):
                self.jobs_by_state.labels(state).set(counted.get(state, 0))
        for name, checkpoint in checkpoints.items():
            self.lag.labels(name).set(float("nan") if checkpoint is None else seq - checkpoint)
            self.up.labels(name).set(0 if checkpoint is None else 1)
        return generate_latest(self.registry)
