"""Personal data on the write path: a personal label's nodes are subjects of the log's sealing.

A label declared ``personal`` makes each of its nodes a subject (its locator: the node's
clear identity, ``Label{keys}``); a property declared ``personal`` is sealed with the
subject of the node holding it. Such a node is named by a pseudonym, ``Label~<subject id>``,
wherever an identity is computed from its keys (``language.identities.pseudonymous``), so
no identity, stream or relationship of the log holds its merge keys; the values themselves
are sealed (``eventlog.sealing``) in the payload and in the request as sent. The events a
transaction emits carry the clear values, so the read model keeps them, and a replay reads
them back until the subject is forgotten (then ``null``).

A write that names nothing personal is planned and appended exactly as before. One that
does is checked once before the transaction (subjects looked up, never made) and planned
again inside it, where its subjects are made as the transaction seals.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import suppress
from dataclasses import dataclass, replace
from typing import Any
from weakref import WeakKeyDictionary

from writegate.eventlog import DraftEvent, Log, Transaction
from writegate.eventlog.sealing import SealedRequest, Sealer
from writegate.gate.schema import LoadedSchema, SchemaRegistry
from writegate.language import (
    PSEUDONYM,
    Pseudonyms,
    clear_identity,
    node_identity,
    pseudonymous,
)

Emitter = Callable[[Transaction, int | None], None]


_UNKNOWN = "unknown"  # the subject id of a personal node the log has never named: matches none


@dataclass(frozen=True)
class Personal:
    """What one schema declares personal: the labels whose nodes are subjects, and each
    label's properties sealed with its node's subject."""

    registry: SchemaRegistry
    labels: frozenset[str]
    properties: Mapping[str, frozenset[str]]  # label -> its personal properties

    def canonical(self, label: object) -> str | None:
        if not isinstance(label, str):
            return None
        label = label.removeprefix(":")
        if self.registry.get_entry(label) is not None:
            return label
        return self.registry.remap_target(label)

    def mentions(self, value: Any) -> bool:
        """Whether arguments name a label with anything personal (so the write seals)."""
        return any(
            label in self.labels or label in self.properties for label, _ in _named(self, value)
        )

    def looking_up(self, log: Log) -> Pseudonyms:
        """Pseudonyms of the subjects the log already has (reads, and checks before a write)."""

        def resolve(label: str, clear: str) -> str | None:
            if label not in self.labels:
                return None
            return f"{label}{PSEUDONYM}{log.subject_of(clear) or _UNKNOWN}"

        return resolve

    def making(self, tx: Transaction) -> Pseudonyms:
        """Pseudonyms inside a write transaction: a subject named for the first time is made."""

        def resolve(label: str, clear: str) -> str | None:
            return f"{label}{PSEUDONYM}{tx.subject(clear)}" if label in self.labels else None

        return resolve

    def sealed(self, body: Any, sealer: Sealer) -> Any:
        """A payload or request with its personal values replaced by their seals."""
        return _Sealing(self, sealer).walk(body)

    def sealer(self, tx: Transaction) -> Callable[[DraftEvent], DraftEvent]:
        def seal(draft: DraftEvent) -> DraftEvent:
            sealing = _Sealing(self, tx)
            request = draft.request
            return replace(
                draft,
                payload=sealing.walk(draft.payload),
                request=sealing.walk(request) if request is not None else None,
            )

        return seal

    def sealed_names(self, label: str, keys: Mapping[str, Any]) -> frozenset[str]:
        """The property names sealed for a node of ``label`` with ``keys``."""
        own = self.properties.get(label, frozenset())
        return own | frozenset(keys) if label in self.labels else own


_KNOWN: WeakKeyDictionary[Any, Personal | None] = WeakKeyDictionary()


def personal_of(registry: SchemaRegistry) -> Personal | None:
    """What ``registry`` declares personal (None if nothing: every write as before)."""
    try:
        return _KNOWN[registry]
    except (KeyError, TypeError):
        pass
    labels: set[str] = set()
    properties: dict[str, frozenset[str]] = {}
    for label in registry.all_canonical_labels():
        entry = registry.get_entry(label)
        if entry is None:
            continue
        if getattr(entry, "personal", False):
            labels.add(label)
        names = frozenset(n for n, p in entry.properties.items() if getattr(p, "personal", False))
        if names:
            properties[label] = names
    found = Personal(registry, frozenset(labels), properties) if labels or properties else None
    with suppress(TypeError):  # a registry that cannot be weakly referenced: worked out anew
        _KNOWN[registry] = found
    return found


def lookup(schema: LoadedSchema | None, log: Log | None) -> Pseudonyms | None:
    """The pseudonyms a read by keys resolves personal nodes through (None: none personal)."""
    if schema is None or log is None:
        return None
    personal = personal_of(schema.registry)
    return personal.looking_up(log) if personal is not None and personal.labels else None


def sealed_observations(snapshot: LoadedSchema) -> bool:
    """Whether the schema declares observations' text personal (``personal_observations``)."""
    document = getattr(snapshot.registry, "document", None)
    return bool(getattr(document, "personal_observations", False))


def random_observation(agent: str, key: str | None) -> str:
    """A sealed observation's id: of chance, as its content's digest could be guessed; under
    an idempotency key drawn from the agent and key, so a retry names the same observation
    (and its sealed request the same subject: ``bound_request``)."""
    if key is None:
        return "obs_" + os.urandom(16).hex()
    return "obs_" + hashlib.sha256(f"{agent}\0{key}".encode()).hexdigest()[:32]


def bound_request(snapshot: LoadedSchema, request: Any) -> Any:
    """What an append binds an idempotency key to: a request naming anything personal as a
    ``SealedRequest`` (its digest taken over its seals), any other as sent; a callable
    works it out from the snapshot (an observation, sealed only if the schema says so)."""
    if callable(request):
        return request(snapshot)
    personal = personal_of(snapshot.registry)
    if personal is None or isinstance(request, SealedRequest) or not personal.mentions(request):
        return request
    return SealedRequest(request, personal.sealed)


def sealed_text(locator: str) -> Callable[[Any, Sealer], Any]:
    """An observation's payload or request with its text sealed by ``sealer``, with the
    observation's own subject (``locator``: its id): as the log keeps it, and as its
    idempotency record binds it."""

    def seal(body: Any, sealer: Sealer) -> Any:
        if not isinstance(body, dict) or not isinstance(body.get("text"), str):
            return body
        return {**body, "text": sealer.seal(locator, body["text"])}

    return seal


def seal_text(tx: Transaction, locator: str) -> Callable[[DraftEvent], DraftEvent]:
    """An observation's draft with its text sealed in the payload and the request as sent."""
    sealed = sealed_text(locator)

    def seal(draft: DraftEvent) -> DraftEvent:
        payload, request = sealed(draft.payload, tx), sealed(draft.request, tx)
        return replace(draft, payload=payload or {}, request=request)

    return seal


def identity_in(log: Log, schema: LoadedSchema | None, label: str, keys: Mapping[str, Any]) -> str:
    """The identity ``label`` and ``keys`` name in ``log`` (a personal node's pseudonym)."""
    with pseudonymous(lookup(schema, log)):
        return node_identity(label, keys)


def planned(log: Log, snapshot: LoadedSchema, raw: Any, plan: Callable[[], Emitter]) -> Emitter:
    """The emitter of a write: as ``plan`` makes it, unless the write names something personal;
    then checked now and planned again in the transaction, its drafts sealed."""
    personal = personal_of(snapshot.registry)
    if personal is None or not personal.mentions(raw):
        return plan()
    with pseudonymous(personal.looking_up(log)):
        plan()  # what the checks refuse is refused before the transaction

    def emit(tx: Transaction, item: int | None) -> None:
        before = tx.sealing
        tx.sealing = personal.sealer(tx)
        try:
            with pseudonymous(personal.making(tx)):
                plan()(tx, item)
        finally:
            tx.sealing = before

    return emit


def _named(personal: Personal, value: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every (canonical label, keys) a payload or request names, at any depth."""
    if isinstance(value, list):
        for item in value:
            yield from _named(personal, item)
    elif isinstance(value, dict):
        for label, _, keys in _pairs(personal, value):
            yield label, keys
        for item in value.values():
            yield from _named(personal, item)


# where a node is named by a label and keys: a ``NodeRef``, and requests' arguments (the
# label the first of its fields that is set: a merge's duplicate has the survivor's unless
# it names its own)
_PAIRS = (
    (("label",), "keys"),
    (("label",), "merge_keys"),
    (("from_label",), "from_keys"),
    (("to_label",), "to_keys"),
    (("label",), "survivor_keys"),
    (("duplicate_label", "label"), "duplicate_keys"),
)


def _pairs(
    personal: Personal, value: Mapping[str, Any]
) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(canonical label, keys field, keys) of each node ``value`` names by label and keys."""
    for label_fields, keys_field in _PAIRS:
        keys = value.get(keys_field)
        if not isinstance(keys, dict):
            continue
        named = next((value[f] for f in label_fields if value.get(f) is not None), None)
        label = personal.canonical(named)
        if label is not None:
            yield label, keys_field, keys


@dataclass
class _Sealing:
    """One draft's payload or request with its personal values replaced by their seals."""

    personal: Personal
    tx: Sealer

    def walk(self, value: Any) -> Any:
        if isinstance(value, list):
            return [self.walk(v) for v in value]
        if not isinstance(value, dict):
            return value
        out = {k: self.walk(v) for k, v in value.items()}
        for named, keys_field, clear in _pairs(self.personal, value):
            locator = clear_identity(named, clear)
            names = self.personal.sealed_names(named, clear)
            if named in self.personal.labels:
                out[keys_field] = {k: self.tx.seal(locator, v) for k, v in clear.items()}
            if keys_field in ("keys", "merge_keys") and names:
                self._properties(out, value, locator, names)
        node = value.get("node")
        if isinstance(node, dict):
            label = self.personal.canonical(node.get("label"))
            keys = node.get("keys")
            if label is not None and isinstance(keys, dict):
                locator = clear_identity(label, keys)
                names = self.personal.sealed_names(label, keys)
                if names:
                    self._properties(out, value, locator, names)
                if label in self.personal.labels and value.get("resolution_keys"):
                    out["resolution_keys"] = self.tx.seal(locator, value["resolution_keys"])
        if isinstance(value.get("stub_keys"), dict):
            out["stub_keys"] = self._stub_keys(value)
        if isinstance(value.get("survivor"), dict) and isinstance(value.get("merged"), dict):
            self._merged(out, value)
        return out

    def _merged(self, out: dict[str, Any], value: Mapping[str, Any]) -> None:
        """A merge's before-image: the duplicate's values and blocking keys sealed with its
        subject, the survivor's values it replaced and set with the survivor's."""
        ends: dict[str, tuple[str, frozenset[str], bool]] = {}
        for end in ("survivor", "merged"):
            label = self.personal.canonical(value[end].get("label"))
            keys = value[end].get("keys")
            if label is None or not isinstance(keys, dict):
                return
            names = self.personal.sealed_names(label, keys)
            ends[end] = (clear_identity(label, keys), names, label in self.personal.labels)
        locator, names, subject = ends["merged"]
        out["properties"] = self._values(value.get("properties"), locator, names)
        if subject and value.get("resolution_keys"):
            out["resolution_keys"] = self.tx.seal(locator, value["resolution_keys"])
        locator, names, _ = ends["survivor"]
        for field in ("replaced", "set"):
            out[field] = self._values(value.get(field), locator, names)

    def _values(self, values: Any, locator: str, names: frozenset[str]) -> Any:
        """``values`` (a property map) with those ``names`` names sealed (absent ones kept)."""
        if not isinstance(values, dict):
            return values
        return {
            k: self.tx.seal(locator, v) if k in names and v is not None else v
            for k, v in values.items()
        }

    def _stub_keys(self, value: Mapping[str, Any]) -> dict[str, Any]:
        """A relationship write's blocking keys of the ends it made as stubs, a personal
        end's sealed with its subject (they hold its normalised name)."""
        ends = value.get("stubs_created")
        named = {e.get("identity"): e for e in ends or () if isinstance(e, dict)}
        out: dict[str, Any] = {}
        for identity, keys in value["stub_keys"].items():
            end = named.get(identity) or {}
            label = self.personal.canonical(end.get("label"))
            clear = end.get("keys")
            if label in self.personal.labels and isinstance(clear, dict):
                out[identity] = self.tx.seal(clear_identity(str(label), clear), keys)
            else:
                out[identity] = keys
        return out

    def _properties(
        self, out: dict[str, Any], value: Mapping[str, Any], locator: str, names: frozenset[str]
    ) -> None:
        """A write's properties and the values it superseded, those named sealed."""
        if isinstance(value.get("properties"), dict):
            out["properties"] = self._values(value["properties"], locator, names)
        superseded = value.get("superseded")
        if isinstance(superseded, list):
            out["superseded"] = [
                {**s, "value": self.tx.seal(locator, s.get("value"))}
                if isinstance(s, dict) and s.get("property") in names
                else s
                for s in superseded
            ]


__all__ = [
    "Personal",
    "Sealer",
    "bound_request",
    "identity_in",
    "lookup",
    "personal_of",
    "planned",
    "random_observation",
    "seal_text",
    "sealed_observations",
    "sealed_text",
]
