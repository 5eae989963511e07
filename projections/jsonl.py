"""The current graph as a JSONL snapshot: MemoryMesh's format (seed 001 §2.4) or the MCP memory
server's, for tools that read those files.

Rendering the file is a pass over the whole graph, so it is not done per batch: a batch
changes only the model (``projections.jsonl_model``, an SQLite file beside the snapshot,
with the checkpoint), and the file is rendered from it when asked — ``flush``, which the
runner calls at the end of a replay or rebuild and, debounced, while following — then
swapped in atomically. Following therefore costs per batch what the batch costs, however
large the graph, and the file trails the model by at most the debounce (``flush``).

Files: ``<path>``; ``<path>.checkpoint.json`` says which model file is current
(``<path>.model.<generation>.sqlite``; a rebuild builds the next one aside and switches to it
when complete), the checkpoint the file was rendered at, the file's length then and the log
it follows (``LogMark``). A file that is not that length (cut short, edited) is rendered
again from the model — the model, not the file, is the store — and reported until it is
(``damage``). Output is deterministic: nodes
sorted by identity, then edges sorted by identity, keys sorted, so the same log gives the
same bytes. Provenance rides in the metadata strings (``"Confidence: 0.675"``,
``"Source: …"``); an edge's ``weight`` is the relationship's confidence. Observations are
left out: neither format has a place for them (the PROV-O projection carries them).
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from writegate.eventlog import EventCore, Log, one_line
from writegate.projections.contract import (
    LogMark,
    ProjectionError,
    ProjectionOfAnotherLog,
    check_batch,
    foreign,
    mark_at,
)
from writegate.projections.files import removed, write_atomically, write_failed
from writegate.projections.jsonl_lines import display_name, edge_record, node_record, shown_name
from writegate.projections.jsonl_model import GraphModel, is_current

__all__ = ["FORMATS", "Format", "JsonlProjector", "display_name"]

Format = Literal["memorymesh", "mcp-memory"]
FORMATS: tuple[Format, ...] = ("memorymesh", "mcp-memory")
RENDER_RATIO = 4.0  # following waits this many times a render's length before the next one
STAGED_COMMIT = 2000  # pending rows a rebuild holds before storing them (more: no faster)
LEGACY_CHUNK = 5000  # events per commit when building a model for an older snapshot


class _Meta(BaseModel):
    """``<path>.checkpoint.json``. Fields after ``checkpoint`` came later: older files
    lack them (no generation: no model on disk; no length or log: not recorded then)."""

    checkpoint: int  # the model's checkpoint the file was rendered at (-1: not yet)
    generation: int | None = None
    length: int | None = None  # the file's length as rendered
    log: LogMark | None = None


class JsonlProjector:
    """The model is on disk, so opening costs the same at any size; ``flush`` renders."""

    def __init__(
        self, path: str | Path, log: Log, name: str = "jsonl", fmt: Format = "memorymesh"
    ) -> None:
        if fmt not in FORMATS:
            raise ValueError(f"format must be one of {FORMATS}, not {fmt!r}")
        self.name = name
        self.path = Path(path)
        self.log = log
        self.format = fmt
        self.meta_path = self.path.with_name(self.path.name + ".checkpoint.json")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        meta = _read_meta(self.meta_path)
        rendered, generation, self._mark = meta.checkpoint, meta.generation, meta.log
        self._damage = _damage_of(self.path, meta)
        self._staging = False
        self._changed = False  # this instance changed the model since the file was rendered
        self._next_render = 0.0  # monotonic time from which following may render again
        try:
            self._open(rendered, generation)
        except (OSError, sqlite3.Error) as exc:  # a full disk (SQLite makes its -shm)
            raise write_failed(name, self._model_path(generation or 0), exc) from exc

    def _open(self, rendered: int, generation: int | None) -> None:
        if generation is not None and is_current(self._model_path(generation)):
            self.generation = generation
            self.model = GraphModel(self._model_path(generation))
            self._stale = rendered != self.model.checkpoint() or not self.path.exists()
            self._stale = self._stale or self._damage is not None
        elif (other := foreign(self.name, self._mark, self.log)) is not None:
            raise ProjectionOfAnotherLog(f"{other}; its model is gone: rebuild it")
        else:
            self._adopt(rendered, generation)

    def _model_path(self, generation: int) -> Path:
        return self.path.with_name(f"{self.path.name}.model.{generation}.sqlite")

    def _adopt(self, rendered: int, generation: int | None) -> None:
        """No model file to trust: a snapshot written before the model was kept on disk, one
        whose model was removed, or a model of an older shape. Build a new model from the
        log up to the file's checkpoint, as opening one always did, render it again, and
        remove the old model."""
        self.generation = (generation or 0) + 1
        self._remove(self.generation)  # what a rebuild that died may have left
        self.model = GraphModel(self._model_path(self.generation))
        self.model.reset()
        page: list[EventCore] = []
        for event in self.log.iter_replayed(to_seq=rendered):
            page.append(event)
            if len(page) == LEGACY_CHUNK:
                self.model.apply(page)
                self.model.commit()
                page = []
        self.model.apply(page)
        self.model.set_checkpoint(rendered)  # what the file said, whatever the log holds
        self.model.commit()
        self._stale = True
        self._render()
        if generation is not None:
            self._remove(generation)

    # -- the contract ----------------------------------------------------------------

    def checkpoint(self) -> int:
        return self.model.checkpoint()

    def kept(self) -> int:
        return self.model.stored()

    def mark(self) -> LogMark | None:
        return self._mark

    def damage(self) -> str | None:
        return self._damage

    def adopt(self) -> None:
        self._stale = True  # the render records the mark, and the file's length
        self.flush()

    def apply(self, events: Sequence[EventCore]) -> int:
        checkpoint = self.model.checkpoint()
        check_batch(self.name, checkpoint, events)
        fresh = [e for e in events if e.seq > checkpoint]  # applied once, never again
        if not fresh:
            return checkpoint
        try:
            self.model.apply(fresh)
            if not self._staging or self.model.pending() >= STAGED_COMMIT:
                self.model.commit()
        except (OSError, sqlite3.Error) as exc:
            self.model.discard()
            raise write_failed(self.name, self.model.path, exc) from exc
        except BaseException:
            self.model.discard()
            raise
        self._changed = True
        return self.model.checkpoint()

    def reset(self) -> None:
        self.model.reset()
        self._changed = True

    def snapshot(self) -> Any:
        self.flush()
        return self.path.read_bytes()

    def close(self) -> None:
        """Render what this instance changed, then let go of the model."""
        if self._changed:
            self.flush()
        self.model.close()

    # -- rendering ---------------------------------------------------------------------

    def flush(self, *, due_only: bool = False) -> bool:
        """Render the file if the model moved since it was rendered; ``due_only`` (while
        following): only once ``RENDER_RATIO`` times the last render's length has passed
        since it ended, so rendering takes at most a fifth of a busy follower's time and the
        file trails the model by a few renders' length at most. True if it rendered."""
        if self._staging or not (self._changed or self._stale):
            return False
        if due_only and time.monotonic() < self._next_render:
            return False
        self._render()
        return True

    def _render(self) -> None:
        """The file first, then the checkpoint it shows: a crash between them leaves the
        file ahead of its recorded checkpoint, and the next flush renders it again."""
        started = time.monotonic()
        try:
            if self.model.pending():
                self.model.commit()
            checkpoint = self.model.checkpoint()
            with self.model.reading():
                write_atomically(self.path, self._lines())
            self._write_meta(checkpoint)
        except (OSError, sqlite3.Error) as exc:  # the file and its record stay as they were
            raise write_failed(self.name, self.path, exc) from exc
        self._changed = self._stale = False
        self._damage = None
        ended = time.monotonic()
        self._next_render = ended + RENDER_RATIO * (ended - started)

    def _write_meta(self, checkpoint: int) -> None:
        """The record of the file as it is now, and of the log the model follows."""
        mark = mark_at(self.log, self.model.checkpoint())
        length = self.path.stat().st_size if self.path.exists() else None
        meta = _Meta(checkpoint=checkpoint, generation=self.generation, length=length, log=mark)
        write_atomically(self.meta_path, [meta.model_dump_json(exclude_none=True).encode()])
        self._mark = mark

    def _lines(self) -> Iterator[bytes]:
        mesh = self.format == "memorymesh"
        for name, label, lines, clash in self.model.node_rows():
            yield node_record(mesh, shown_name(name, label, clash), label, lines)
        for row in self.model.edge_rows():
            identity, type_, weight, start, start_label, start_clash = row[:6]
            end_name, end_label, end_clash = row[6:]
            if start is None or start_label is None or end_name is None or end_label is None:
                raise ProjectionError(f"{self.name}: relationship {identity} lost an endpoint")
            yield edge_record(
                mesh,
                type_,
                shown_name(start, start_label, start_clash),
                shown_name(end_name, end_label, end_clash),
                weight,
            )

    # -- rebuilding aside ------------------------------------------------------------------

    resumes_staging = True  # ``staged(resume=True)`` continues what a dead rebuild built

    @contextmanager
    def staged(self, *, resume: bool = False) -> Iterator[bool]:
        """Build the next model generation aside and switch to it when complete (a rebuild):
        readers keep the old file, and a crash leaves the old model and file as they were.
        ``resume``: continue the next generation a rebuild that died left, as far as its
        last commit (a resumed job), if there is one; yields whether it did."""
        live, generation = self.model, self.generation + 1
        keep = [self._model_path(self.generation).name]
        building = self._model_path(generation)
        resumed = resume and building.exists() and is_current(building)
        if resumed:
            keep.append(building.name)
        self._drop_models(keep)
        self.model = GraphModel(building, bulk=True)
        self._staging = True
        try:
            yield resumed
            self.model.commit()
        except BaseException as exc:
            self.model.close()
            self._remove(generation)
            self.model = live
            if isinstance(exc, OSError | sqlite3.Error):
                raise write_failed(self.name, building, exc) from exc
            raise
        finally:
            self._staging = False
        self.model.close()
        try:
            with open(building, "rb+") as built:
                os.fsync(built.fileno())
            previous, self.generation = self.generation, generation
            self._write_meta(-1)  # the new model is current; the file is not rendered from it
        except OSError as exc:
            raise write_failed(self.name, self.meta_path, exc) from exc
        live.close()
        self._remove(previous)
        self.model = GraphModel(self._model_path(generation))
        self._render()

    def drop_staged(self) -> list[tuple[Path, int]]:
        """Remove the model generations beside the current one: what a rebuild that died
        was building (and its write-ahead log)."""
        return self._drop_models([self._model_path(self.generation).name])

    def _drop_models(self, keep: list[str]) -> list[tuple[Path, int]]:
        found = sorted(self.path.parent.glob(f"{self.path.name}.model.*"))
        return removed(path for path in found if not path.name.startswith(tuple(keep)))

    def _remove(self, generation: int) -> None:
        model = self._model_path(generation)
        for suffix in ("", "-wal", "-shm", "-journal"):
            model.with_name(model.name + suffix).unlink(missing_ok=True)


def _read_meta(path: Path) -> _Meta:
    try:
        return _Meta.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        return _Meta(checkpoint=0)
    except ValidationError as exc:
        raise ProjectionError(f"{path} is not a checkpoint record: {one_line(exc)}") from exc


def _damage_of(path: Path, meta: _Meta) -> str | None:
    """Why the file is not the one its record describes (None: it is, or nothing was
    recorded); the next render writes it again."""
    if meta.length is None:
        return None
    if not path.exists():
        return f"{path} is missing (its checkpoint recorded {meta.length:,} bytes)"
    size = path.stat().st_size
    if size == meta.length:
        return None
    how = "cut short" if size < meta.length else "changed"
    return f"{path} is {size:,} bytes, its checkpoint recorded {meta.length:,}: the file was {how}"
