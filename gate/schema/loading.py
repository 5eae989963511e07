"""Reading a schema file strictly: a duplicate key is refused, and every problem has its line.

PyYAML and the json module both keep the last of two equal keys without a word, so a file
that declares ``Person`` twice would publish half of what its author wrote. Both formats are
composed into PyYAML's node tree first, which knows where every key and item starts: equal
keys in one mapping are refused at the second one's position, and any later problem (an
unknown key, an undeclared required property) is reported at its place,
``schema.yaml:12:5: nodes.Person.required.0: …``. The content of a JSON file is the json
module's (PyYAML reads JSON's structure but not all its scalars: ``1e5``, escaped
surrogate pairs), whose syntax errors carry their own position.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from writegate.gate.schema.document import SchemaDocument, SchemaDocumentError, parse_document
from writegate.gate.schema.rules import Problem

if TYPE_CHECKING:
    import yaml

MERGE_TAG = "tag:yaml.org,2002:merge"


class _Index:
    """Where each key and item of a composed node tree starts, and which keys repeat."""

    def __init__(self) -> None:
        self.positions: dict[tuple[str, ...], tuple[int, int]] = {}
        self.duplicates: list[Problem] = []
        self._seen: set[int] = set()  # aliases share nodes: each is indexed once

    def walk(self, node: yaml.Node, path: tuple[str, ...] = ()) -> None:
        import yaml  # noqa: PLC0415

        if id(node) in self._seen:
            return
        self._seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            first: dict[str, tuple[int, int]] = {}
            for key, value in node.value:
                if key.tag == MERGE_TAG or not isinstance(key, yaml.ScalarNode):
                    continue  # merged keys may repeat (the mapping's own win): YAML says so
                at = (key.start_mark.line + 1, key.start_mark.column + 1)
                if key.value in first:
                    line, column = first[key.value]
                    self.duplicates.append(
                        Problem(
                            (*path, key.value),
                            f"duplicate key {key.value!r} (first at line {line}, column "
                            f"{column}): each key once",
                            at,
                        )
                    )
                else:
                    first[key.value] = at
                self.positions[(*path, key.value)] = at  # the last one is what is read
                self.walk(value, (*path, key.value))
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                mark = item.start_mark
                self.positions[(*path, str(index))] = (mark.line + 1, mark.column + 1)
                self.walk(item, (*path, str(index)))


def read_schema_file(path: Path) -> tuple[Any, dict[tuple[str, ...], tuple[int, int]]]:
    """The data of a YAML or JSON file and the position of each of its keys and items."""
    import yaml  # noqa: PLC0415 (~15 ms, and only schema files are YAML: the log holds JSON)

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else str(exc)
        raise SchemaDocumentError(f"cannot read schema {path}: {reason or exc}") from exc
    is_json = path.suffix == ".json"
    data: Any = None
    if is_json:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SchemaDocumentError(
                f"{path}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}"
            ) from exc
        text = text.replace("\t", " ")  # JSON's whitespace, not YAML's: columns stay put
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    index = _Index()
    try:
        node = loader.get_single_node()
        if node is not None:
            index.walk(node)
            if not is_json:
                data = loader.construct_document(node)
    except yaml.YAMLError as exc:
        if not is_json:
            raise SchemaDocumentError(_yaml_error(path, exc)) from exc
        # JSON that PyYAML cannot compose (a key over 1024 characters): no positions, and
        # duplicates are found by the json module instead
        json.loads(text, object_pairs_hook=_refuse_duplicates(str(path)))
    finally:
        loader.dispose()
    if index.duplicates:  # and whatever else is wrong, in the document as read (last wins)
        others = _problems(data, str(path), index.positions)
        raise SchemaDocumentError.of(str(path), [*index.duplicates, *others], index.positions)
    return data, index.positions


def _problems(
    data: Any, origin: str, positions: dict[tuple[str, ...], tuple[int, int]]
) -> list[Problem]:
    try:
        parse_document(data, origin, positions=positions)
    except SchemaDocumentError as exc:
        return exc.problems
    return []


def _refuse_duplicates(origin: str) -> Any:
    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for key, value in items:
            if key in seen:
                raise SchemaDocumentError(f"{origin}: duplicate key {key!r}: each key once")
            seen[key] = value
        return seen

    return pairs


def _yaml_error(path: Path, exc: Exception) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    if mark is None:
        return f"{path}: not valid YAML: {problem}"
    return f"{path}:{mark.line + 1}:{mark.column + 1}: not valid YAML: {problem}"


def load_document(path: str | Path) -> SchemaDocument:
    """Read a YAML (``.yaml``/``.yml``) or JSON schema file, held to the publishing rules."""
    path = Path(path)
    data, positions = read_schema_file(path)
    return parse_document(data, str(path), positions=positions)
