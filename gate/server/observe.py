"""What an operator sees of a running server: its log lines and its metrics.

Log lines go to stderr (stdout is the MCP wire under stdio), plain or as JSON objects
(``python-json-logger``), one per event worth knowing: a refused write at ``info`` with
the agent and code, an internal failure once at ``error`` with its traceback. Metrics
are Prometheus' (``prometheus-client``), in a registry of the server's own.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Literal

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from pythonjsonlogger.json import JsonFormatter

LogFormat = Literal["plain", "json"]
LOG_FORMATS: tuple[LogFormat, ...] = ("plain", "json")
LOG_LEVELS = ("debug", "info", "warning", "error")
PLAIN = "%(asctime)s %(levelname)s %(name)s: %(message)s"

log = logging.getLogger("writegate.server")


def configure_logging(level: str = "warning", fmt: LogFormat = "plain") -> None:
    """One handler on stderr for writegate's and the web server's loggers."""
    handler = logging.StreamHandler(sys.stderr)
    if fmt == "json":
        handler.setFormatter(
            JsonFormatter("%(asctime)s %(levelname)s %(name)s %(message)s", timestamp=True)
        )
    else:
        handler.setFormatter(logging.Formatter(PLAIN))
    for name in ("writegate", "uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        logger.handlers = [handler]
        logger.setLevel(level.upper())
        logger.propagate = False


class Metrics:
    """The server's counters, histograms and gauges, and their text exposition."""

    def __init__(self, lags: Callable[[], dict[str, float]] | None = None) -> None:
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
        self.sessions = Gauge(
            "writegate_http_sessions",
            "Streamable HTTP sessions the server holds (2025 wire; the 2026 wire has none).",
            registry=self.registry,
        )
        self._lags = lags
        self.open_sessions: Callable[[], int] | None = None  # set by the server that counts

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

    def exposition(self, head: int) -> bytes:
        """The text a Prometheus scrape reads, with the gauges read now."""
        self.head.set(head)
        if self.open_sessions is not None:
            self.sessions.set(self.open_sessions())
        if self._lags is not None:
            for name, lag in self._lags().items():
                self.lag.labels(name).set(lag)
        return generate_latest(self.registry)
