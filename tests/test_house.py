"""House rules that keep the code base navigable, checked on the source itself.

* the event language is read through its models: no payload or provenance is read by
  string key, and no event type is spelled, outside ``writegate.language``;
* dependencies follow the arrows of DESIGN.md (``docs/design.md``);
* each table has one owner: SQL (or a ``has_table`` check) naming it appears only in its
  owner's package;
* SQL shared with SQLite runs on the SQLite that supported Pythons ship (3.34 on RHEL 9);
* modules stay small, and nothing is exempted from the formatter to look smaller;
* each part is one real folder: the checkout holds no links, ``writegate/`` only the package
  root, and the parts are the folders ``pyproject.toml`` maps (a tool mapping imports sees
  one tree).
"""

from __future__ import annotations

import ast
import re
import subprocess
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.typing_tree import package_dirs
from writegate.language import EVENT_TYPES

PARTS = {  # package part -> its folder in the checkout
    "eventlog": ROOT / "eventlog",
    "gate": ROOT / "gate",
    "projections": ROOT / "projections",
    "cli": ROOT / "cli",
    "language": ROOT / "language",
}
MAX_LINES = 400


def modules(*parts: str) -> Iterator[tuple[str, Path]]:
    for part in parts or tuple(PARTS):
        for path in sorted(PARTS[part].rglob("*.py")):
            yield part, path


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT))


def test_payloads_and_event_types_are_read_only_through_the_language() -> None:
    key_read = re.compile(r"\b(payload|provenance)(\[\s*['\"]|\.get\()")
    type_literal = re.compile("|".join(f"[\"']{re.escape(t)}[\"']" for t in EVENT_TYPES))
    offenders = []
    for _, path in modules("eventlog", "gate", "projections", "cli"):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if key_read.search(line) or type_literal.search(line):
                offenders.append(f"{_name(path)}:{number}: {line.strip()}")
    assert offenders == []


ALLOWED = {  # what each part may import from the others (prefixes of writegate.<module>)
    "eventlog": set(),
    "language": {"eventlog"},
    "projections": {"eventlog", "language", "projections"},
    "gate": {"eventlog", "language", "gate", "projections.state"},
    "cli": {"eventlog", "language", "gate", "projections", "cli"},
}


def _imports(path: Path) -> Iterator[str]:
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        for name in names:
            if name.startswith("writegate."):
                yield name.removeprefix("writegate.")


def test_dependencies_follow_the_arrows() -> None:
    offenders = []
    for part, path in modules():
        for target in _imports(path):
            own = target.split(".")[0] == part
            allowed = own or any(
                target == prefix or target.startswith(prefix + ".") for prefix in ALLOWED[part]
            )
            if not allowed:
                offenders.append(f"{_name(path)} imports writegate.{target}")
    assert offenders == []


OWNERS = {  # table -> the only folder whose code may name it in SQL
    r"events|event_streams|idempotency|writegate_log|subject_keys|sealed_values"
    r"|migrated_hashes": PARTS["eventlog"],
    r"state_\w+|projection_checkpoints": PARTS["projections"] / "state",
    r"search_\w+": PARTS["projections"] / "search",
    r"vector_\w+": PARTS["projections"] / "vectors",
    r"jsonl_\w+": PARTS["projections"] / "jsonl_model.py",
    r"rejections|rejection_details": PARTS["gate"] / "rejections.py",
    r"jobs": PARTS["gate"] / "jobs" / "table.py",
}
SQL = (
    r"\b(?:FROM|INTO|UPDATE|JOIN|TABLE(?: IF NOT EXISTS)?|ON)\s+(?:{tables})\b"
    r"|has_table\(\s*[\"'](?:{tables})[\"']"
)


@pytest.mark.parametrize("tables", list(OWNERS))
def test_each_table_has_one_owner(tables: str) -> None:
    pattern = re.compile(SQL.replace("{tables}", tables))
    owner = OWNERS[tables]
    offenders = [
        _name(path)
        for _, path in modules()
        if pattern.search(path.read_text()) and not (path == owner or owner in path.parents)
    ]
    assert offenders == []


def test_each_part_is_one_real_folder() -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "-s"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    links = [line.split("\t", 1)[1] for line in tracked if line.startswith("120000")]
    assert links == []
    mapped = package_dirs()
    assert {name.removeprefix("writegate.") for name in mapped} - {"writegate"} == set(PARTS)
    assert all(mapped[f"writegate.{part}"] == folder for part, folder in PARTS.items())
    root_files = {path.name for path in (ROOT / "writegate").iterdir()} - {"__pycache__"}
    assert root_files == {"__init__.py", "__main__.py", "py.typed"}


def test_every_package_folder_is_installed() -> None:
    """A sub-package the list in ``pyproject.toml`` forgets works from the checkout's
    editable install and is missing from the wheel."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(project["tool"]["setuptools"]["packages"])
    found = {"writegate"} | {
        ".".join(("writegate", part, *init.parent.relative_to(folder).parts))
        for part, folder in PARTS.items()
        for init in folder.rglob("__init__.py")
    }
    assert listed == found


def test_modules_stay_small() -> None:
    large = [
        f"{_name(path)}: {count} lines"
        for _, path in modules()
        if (count := len(path.read_text().splitlines())) > MAX_LINES
    ]
    assert large == []


def test_no_module_is_exempted_from_the_formatter() -> None:
    exempt = [
        f"{_name(path)}:{number}"
        for _, path in modules()
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if "fmt: skip" in line or "fmt: off" in line
    ]
    assert exempt == []


NEWER_SQLITE = re.compile(r"\bRETURNING\b|\bDROP COLUMN\b")  # both SQLite 3.35
POSTGRESQL_ONLY = {
    *(PARTS["eventlog"] / name for name in ("postgres.py", "pgsql.py", "pgtables.py")),
    PARTS["projections"] / "search" / "postgres.py",
}


def test_sql_runs_on_older_sqlite() -> None:
    newer = [
        _name(path)
        for _, path in modules()
        if path not in POSTGRESQL_ONLY and NEWER_SQLITE.search(path.read_text())
    ]
    assert newer == []
