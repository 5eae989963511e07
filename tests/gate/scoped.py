"""A scoped graph for the scope tests: three labels in scopes a, b and c, one in none; the
writes, links and grants they share; and the gate that publishes it (``scoped_gate``,
tests/gate/conftest.py, on the backend a module's ``db_path`` names)."""

from __future__ import annotations

from typing import Any

from writegate.gate import Gate
from writegate.gate.scopes import Scopes

SCOPES = ("a", "b", "c")
LABELS = {"a": "Alpha", "b": "Beta", "c": "Gamma"}
SCHEMA: dict[str, Any] = {
    "name": "scoped",
    "nodes": {
        **{label: {"merge_keys": ["name"], "scope": scope} for scope, label in LABELS.items()},
        "Plain": {"merge_keys": ["name"]},
    },
    "relationships": {"LINK": {}},
}
WRITE: dict[str, Any] = {"source": "test", "extraction_method": "manual", "reliability": 0.9}


def word(scope: str, n: int) -> str:
    return f"{scope}word{n}"


def write(gate: Gate, scope: str, n: int, **more: Any) -> None:
    name = word(scope, n)
    result = gate.write_node(
        label=LABELS[scope],
        merge_keys={"name": name},
        properties={"note": f"{name} said"},
        **WRITE,
        **more,
    )
    assert result.status in ("written", "unchanged"), result  # written before: unchanged


def link(gate: Gate, one: tuple[str, int], other: tuple[str, int]) -> None:
    result = gate.write_relationship(
        type="LINK",
        from_label=LABELS[one[0]],
        from_keys={"name": word(*one)},
        to_label=LABELS[other[0]],
        to_keys={"name": word(*other)},
        **WRITE,
    )
    assert result.status in ("written", "unchanged"), result  # a link drawn twice: unchanged


def only(*scopes: str) -> Scopes:
    return Scopes(granted=frozenset(scopes))
