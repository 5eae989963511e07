"""How the command line names a node and a relationship: one shell word per node.

The grammar, decided once here and used by every command that names a node:

- ``NODE`` is ``Label:key=value[,key=value…]``: ``Person:name=Ada``,
  ``Person:name=Ada,born=1815``. A value is JSON when it reads as a JSON scalar
  (``born=1815`` is a number, ``alive=true`` a boolean, ``name="Smith, John"`` a string
  holding a comma), else the text as it is — and the text as typed where the schema
  declares the key a string (``Paper:doi=10.5``; ``cli.declared``); quote it to keep
  ``"1815"`` a string anywhere.
- ``NODE`` may also be ``Label{json keys}``, the identity writegate itself prints
  (``Person{"name":"Ada"}``), so what a command printed pastes into the next one.
- A relationship is ``TYPE FROM TO``, its two ends node words, or the identity writegate
  prints, ``(Person{"name":"Ada"})-[WORKS_FOR]->(Organization{"name":"Initech"})``.

One word per node, so commands naming two nodes (``write relationship``, ``merge``,
``path``) read like those naming one, and simple values paste without quoting. The
spellings used before (``LABEL -k KEY=VALUE``, ``LABEL KEY=VALUE…``, ``--from LABEL -f
KEY=VALUE``, ``-s``/``-d``, ``--around LABEL KEY=VALUE``) still work for one release, each
with one ``note:`` line naming the new spelling.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import click

from writegate.cli.common import fail, note, parse_assignments
from writegate.cli.declared import Declared, node_types, read_as_declared

NODE_HELP = "Label:key=value[,key=value...] or Label{json keys}"


@dataclass(frozen=True)
class NodeName:
    """A node as the command line named it: its label (maybe a synonym) and merge keys."""

    label: str
    keys: dict[str, Any]

    def ref(self) -> dict[str, Any]:
        """The reads' and tools' node reference."""
        return {"label": self.label, "merge_keys": dict(self.keys)}

    @property
    def word(self) -> str:
        """The node in this grammar, as a person would type it."""
        return f"{self.label}:" + ",".join(f"{k}={_value_word(v)}" for k, v in self.keys.items())

    @property
    def typed(self) -> str:
        """The word as a shell takes it (quoted when it holds a space or a quote)."""
        return shlex.quote(self.word)


def parse_node(text: str, what: str = "NODE") -> NodeName:
    """``Label:key=value,…`` or ``Label{json keys}``, or one line and exit 2."""
    brace, colon = text.find("{"), text.find(":")
    if brace > 0 and (colon < 0 or brace < colon):
        return _identity_form(text, brace, what)
    if colon <= 0:
        fail(f"{what} {text!r} is not {NODE_HELP} (e.g. Person:name=Ada)", 2)
    label, rest = text[:colon], text[colon + 1 :]
    keys = _pairs(rest, text, what, lambda: node_types(label))
    if not keys:
        fail(f"{what} {text!r} names no key: {label}:key=value", 2)
    return NodeName(label, keys)


def _identity_form(text: str, brace: int, what: str) -> NodeName:
    try:
        keys = json.loads(text[brace:])
    except json.JSONDecodeError:
        keys = None
    if not isinstance(keys, dict) or not keys:
        fail(f'{what} {text!r} is not Label{{json keys}} (e.g. Person{{"name":"Ada"}})', 2)
    return NodeName(text[:brace].removeprefix(":"), keys)


def _pairs(rest: str, text: str, what: str, declared: Declared) -> dict[str, Any]:
    """``k=v,k=v``; a value starting with a double quote runs to its closing quote (JSON),
    so it may hold commas; a bare one reads as its key is ``declared``."""
    keys: dict[str, Any] = {}
    at = 0
    while at < len(rest):
        equals = rest.find("=", at)
        name = rest[at:equals] if equals >= 0 else rest[at:]
        if equals < 0 or not name or "," in name:
            fail(f"{what} {text!r}: {name!r} is not key=value (quote a value with a comma)", 2)
        at = equals + 1
        if rest.startswith('"', at):
            decoder = json.JSONDecoder()
            try:
                value, at = decoder.raw_decode(rest, at)
            except json.JSONDecodeError:
                fail(f"{what} {text!r}: the quoted value of {name} does not end", 2)
        else:
            end = rest.find(",", at)
            end = len(rest) if end < 0 else end
            bare = rest[at:end]
            value, at = read_as_declared(bare, _scalar(bare), declared, name), end
        keys[name] = value
        if at < len(rest):
            if rest[at] != ",":
                fail(f"{what} {text!r}: expected ',' after the value of {name}", 2)
            at += 1
    return keys


def _scalar(text: str) -> Any:
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return text
    return value if isinstance(value, (str, int, float, bool)) else text


def _value_word(value: Any) -> str:
    if isinstance(value, str) and "," not in value and _scalar(value) == value:
        return value
    return json.dumps(value, ensure_ascii=False)


class NodeType(click.ParamType[NodeName]):
    """A click parameter holding a ``NodeName`` (errors are one line, exit 2)."""

    name = "node"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> NodeName:
        if isinstance(value, NodeName):
            return value
        what = param.human_readable_name if param is not None else "NODE"
        return parse_node(str(value), what)


NODE = NodeType()


def deprecated(old: str, new: str) -> None:
    """One line saying the spelling used still works, for this release, and the new one."""
    note(f"{old} is deprecated (it still works, for this release); now: {new}")


def node_or_old(words: Sequence[str], command: str) -> NodeName:
    """``NODE`` (one word), or the old ``LABEL KEY=VALUE…`` with a deprecation line."""
    if len(words) == 1:
        return parse_node(words[0])
    name = old_name(words[0], words[1:], "KEY=VALUE")
    deprecated(f"{command} {' '.join(words)}", f"{command} {name.typed}")
    return name


def labelled(label: str, keys: Sequence[str], command: str, option: str) -> NodeName:
    """``LABEL`` with keys given by an old option (``-k KEY=VALUE``), named anew."""
    name = old_name(label, keys, option)
    deprecated(f"{command} {label} {option} …", f"{command} {name.typed}")
    return name


def old_name(label: str, pairs: Sequence[str], what: str) -> NodeName:
    """A node named the old way, a label and ``KEY=VALUE`` pairs (no note: the caller
    says it once)."""
    keys = parse_assignments(tuple(pairs), what, lambda: node_types(label))
    if not keys:
        fail("name the node by its keys: Label:key=value", 2)
    return NodeName(label, keys)


def ends(
    command: str,
    start: NodeName | None,
    end: NodeName | None,
    old: tuple[str | None, tuple[str, ...], str | None, tuple[str, ...]],
) -> tuple[NodeName, NodeName]:
    """A relationship's ends: ``FROM TO`` words, or the old ``--from L -f K=V --to L -t K=V``
    (with a deprecation line)."""
    from_label, from_keys, to_label, to_keys = old
    if from_label is None and to_label is None and not from_keys and not to_keys:
        if start is None or end is None:
            fail(f"{command} needs both ends: TYPE FROM TO (each {NODE_HELP})", 2)
        return start, end
    if start is not None or from_label is None or to_label is None:
        fail(f"{command}: name the ends as FROM TO words (or the old --from/--to, not both)", 2)
    first = old_name(from_label, from_keys, "--from-key")
    second = old_name(to_label, to_keys, "--to-key")
    deprecated(f"{command} --from … -f … --to … -t …", f"{command} {first.typed} {second.typed}")
    return first, second


_IDENTITY = re.compile(r"\((?P<start>.+)\)-\[(?P<type>[^\]]+)\]->\((?P<end>.+)\)")


def relationship(
    command: str,
    rtype: str,
    start: NodeName | None,
    end: NodeName | None,
    old: tuple[str | None, tuple[str, ...], str | None, tuple[str, ...]],
) -> tuple[str, NodeName, NodeName]:
    """``TYPE FROM TO``; or, in TYPE's place alone, the identity writegate prints,
    ``(Person{"name":"Ada"})-[WORKS_FOR]->(Organization{"name":"Initech"})``."""
    printed = _IDENTITY.fullmatch(rtype)
    if printed is not None and start is None and end is None and old[0] is None:
        first = parse_node(printed["start"], "FROM")
        return printed["type"], first, parse_node(printed["end"], "TO")
    first, second = ends(f"{command} {rtype}", start, end, old)
    return rtype, first, second


def relationship_arguments(f: Callable[..., Any]) -> Callable[..., Any]:
    """``TYPE FROM TO``, and the old endpoint options, hidden, for one more release."""
    f = old_endpoints(f)
    f = click.argument("end", metavar="TO", type=NODE, required=False)(f)
    f = click.argument("start", metavar="FROM", type=NODE, required=False)(f)
    return click.argument("rtype", metavar="TYPE")(f)


def old_endpoints(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--from LABEL -f KEY=VALUE --to LABEL -t KEY=VALUE``, hidden: the old spelling."""
    for option in (
        click.option("-t", "--to-key", "to_keys", multiple=True, hidden=True),
        click.option("--to", "to_label", hidden=True),
        click.option("-f", "--from-key", "from_keys", multiple=True, hidden=True),
        click.option("--from", "from_label", hidden=True),
    ):
        f = option(f)
    return f
