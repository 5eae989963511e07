"""Identifier rules: the only strings that may become labels, types or property names."""

from __future__ import annotations

import re

from writegate.gate.errors import ErrorCode, GateRejection
from writegate.language import IDENTIFIER, is_identifier

__all__ = [
    "IDENTIFIER",
    "PROTECTED_FIELDS",
    "bare_label",
    "check_identifier",
    "is_agent_id",
    "is_identifier",
    "is_protected",
]

# Gate-computed fields (seed 000) plus the gate's breadcrumbs; names starting with "_" are
# reserved for the gate as a whole.
PROTECTED_FIELDS = frozenset(
    {"confidence", "write_gate_version", "source", "extraction_method", "last_updated"}
)


def check_identifier(name: str, what: str) -> str:
    if not is_identifier(name):
        raise GateRejection(
            ErrorCode.INVALID_IDENTIFIER,
            f"{what} {name!r} is not a valid identifier (letters, digits, _; at most 64)",
            {"field": what, "value": name, "pattern": IDENTIFIER.pattern},
        )
    return name


def bare_label(label: str, what: str = "label") -> str:
    """Strip one leading ':' (agents write ':Person') and validate what is left."""
    return check_identifier(label[1:] if label.startswith(":") else label, what)


def is_protected(name: str) -> bool:
    return name in PROTECTED_FIELDS or name.startswith("_")


# Agent ids come from credentials or server configuration, never from tool arguments.
AGENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def is_agent_id(name: object) -> bool:
    return isinstance(name, str) and AGENT_ID.fullmatch(name) is not None
