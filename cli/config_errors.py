"""Configuration mistakes said as an operator reads them: one line each, naming the
environment variable or the file, the key, and what it takes.

pydantic's own text names its classes and sources (``1 validation error for Bound``,
``error parsing value for field "serve" from source "EnvSettingsSource"``) and says
nothing of where the value came from; the settings' types say what each key takes.
"""

from __future__ import annotations

import json
import os
import tomllib
import types
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from writegate.cli.render import did_you_mean

PREFIX = "WRITEGATE_"
Key = list[str | int]


def explain(exc: Exception, model: type[BaseModel], file: Path | None) -> list[str]:
    """One line per mistake in ``exc``, raised loading ``model`` from ``file`` and the
    environment."""
    if isinstance(exc, ValidationError):
        return [_problem(error, model, file) for error in exc.errors()]
    if isinstance(exc, tomllib.TOMLDecodeError):
        return [f"{file}: not TOML: {exc}"]
    unparsed = _unparsed_environment(model)
    return unparsed or [f"{file or 'the environment'}: {exc}"]


def _problem(error: ErrorDetails, model: type[BaseModel], file: Path | None) -> str:
    key, _ = _walk(model, error["loc"])
    shown = _dotted(key)
    where = _where(key, file)
    kind, given = error["type"], error.get("input")
    if kind == "missing":
        return f"{where}: {shown} is required"
    if kind == "extra_forbidden":
        if len(key) == 1 and isinstance(given, dict):  # a [table] at the file's top
            return f"{where}: [{shown}] is not a section{_hint(shown, model, (), '[{}]')}"
        return f"{where}: {shown} is not a setting{_hint(str(key[-1]), model, error['loc'][:-1])}"
    if kind in ("model_type", "dict_type"):
        return f"{where}: {shown} should be a table of settings, not {_shown(given)}"
    said = error["msg"].replace("Input should be", "should be")
    if isinstance(given, str | int | float | bool) and not isinstance(given, dict):
        said += f" (got {_shown(given)})"
    return f"{where}: {shown} {said[0].lower()}{said[1:]}"


def _hint(name: str, model: type[BaseModel], loc: tuple[str | int, ...], form: str = "{}") -> str:
    """`` (did you mean port?)`` for the key closest to ``name`` at ``loc``, else the keys."""
    known = {key: form.format(key) for key in _keys_of(model, loc)}
    near = did_you_mean(name, known, said=" (did you mean {}?)")
    return near or f" (known: {', '.join(known.values())})"


def _shown(value: Any) -> str:
    """A value as JSON; a TOML date or time (which JSON has not) as its text."""
    return json.dumps(value, default=str)


def _unparsed_environment(model: type[BaseModel]) -> list[str]:
    """The ``WRITEGATE_…`` variables whose key takes a list or a table, given as
    something that is not JSON (what pydantic-settings reports without naming them)."""
    lines = []
    for name, value in sorted(os.environ.items()):
        if not name.upper().startswith(PREFIX):
            continue
        key: Key = [part.lower() for part in name[len(PREFIX) :].split("__")]
        walked, leaf = _walk(model, tuple(key))
        if len(walked) != len(key) or leaf is None:
            continue
        form = _json_form(leaf)
        if form is None:
            continue
        try:
            json.loads(value)
        except json.JSONDecodeError:
            example = json.dumps([value]) if form == "list" else '{"key": "value"}'
            lines.append(
                f"environment {name}: {_dotted(key)} takes a JSON {form}, such as "
                f"{name}='{example}' (got {value})"
            )
    return lines


def _json_form(annotation: Any) -> str | None:
    plain = _unwrap(annotation)
    if get_origin(plain) in (list, tuple, set):
        return "list"
    if get_origin(plain) is dict or _models(plain):
        return "object"
    return None


def _walk(model: type[BaseModel], loc: tuple[str | int, ...]) -> tuple[Key, Any]:
    """``loc`` as the keys an operator writes (a union's tags left out), and the type the
    last one takes (``None`` once it is not known)."""
    annotation: Any = model
    key: Key = []
    for part in loc:
        plain = _unwrap(annotation)
        choices = _models(plain)
        if len(choices) > 1:  # a tagged union: pydantic puts the tag in loc
            annotation = next((m for m in choices if part in _tags(m)), None)
            continue
        key.append(part)
        if choices and isinstance(part, str):
            field = choices[0].model_fields.get(part)
            annotation = field.annotation if field else None
        elif get_origin(plain) is dict:
            annotation = get_args(plain)[1]
        elif get_origin(plain) in (list, tuple, set):
            annotation = get_args(plain)[0]
        else:
            annotation = None
    return key, annotation


def _keys_of(model: type[BaseModel], loc: tuple[str | int, ...]) -> list[str]:
    _, annotation = _walk(model, loc)
    choices = _models(_unwrap(annotation))
    return sorted({name for m in choices for name in m.model_fields})


def _unwrap(annotation: Any) -> Any:
    """``X`` of ``Annotated[X, …]`` and ``X | None``."""
    while True:
        if get_origin(annotation) is Annotated:
            annotation = get_args(annotation)[0]
        elif _is_union(annotation):
            options = [a for a in get_args(annotation) if a is not type(None)]
            if len(options) != 1:
                return annotation
            annotation = options[0]
        else:
            return annotation


def _is_union(annotation: Any) -> bool:
    return get_origin(annotation) in (Union, types.UnionType)


def _models(annotation: Any) -> list[type[BaseModel]]:
    options = get_args(annotation) if _is_union(annotation) else (annotation,)
    return [o for o in options if isinstance(o, type) and issubclass(o, BaseModel)]


def _tags(model: type[BaseModel]) -> tuple[Any, ...]:
    field = model.model_fields.get("kind")
    if field is None or get_origin(field.annotation) is not Literal:
        return ()
    return get_args(field.annotation)


def _where(key: Key, file: Path | None) -> str:
    """Where ``key``'s value came from: the environment variable that set it (or the
    table holding it), else the file."""
    names: list[str] = []
    for part in key:
        if not isinstance(part, str):
            break
        names.append(part.upper())
    upper = {name.upper(): name for name in os.environ if name.upper().startswith(PREFIX)}
    for end in range(len(names), 0, -1):
        variable = PREFIX + "__".join(names[:end])
        if variable in upper:
            return f"environment {upper[variable]}"
    if file is not None:
        return str(file)
    for end in range(len(names) - 1, 0, -1):
        table = PREFIX + "__".join(names[:end]) + "__"
        if any(name.startswith(table) for name in upper):
            return f"environment {table}…"
    return "the environment"


def _dotted(key: Key) -> str:
    text = ""
    for part in key:
        text += f"[{part}]" if isinstance(part, int) else f".{part}" if text else part
    return text


def mistyped_sections(environ: Mapping[str, str], sections: Iterable[str]) -> list[str]:
    """A variable ``WRITEGATE_<SECTION>__<KEY>`` whose section is none but close to one
    (``WRITEGATE_SCOPE__DISABLED``): read, it would set nothing, and a switch meant to hide
    a scope would silently not (others, far from any section, are someone else's)."""
    from difflib import get_close_matches

    known = list(sections)
    problems = []
    for name in sorted(n for n in environ if n.startswith(PREFIX)):
        section, nested, key = name.removeprefix(PREFIX).lower().partition("__")
        if nested and section not in known and (near := get_close_matches(section, known, 1)):
            meant = f"{PREFIX}{near[0]}__{key}".upper()
            problems.append(
                f"environment {name}: {section} is not a section (did you mean {meant}?)"
            )
    return problems
