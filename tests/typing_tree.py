"""The checkout laid out as installed, for mypy: ``python -m tests.typing_tree``.

The package's parts are the repository's top-level folders, mapped under ``writegate`` by
``pyproject.toml``'s ``package-dir``. Python follows that mapping through the editable
install's import hook, but mypy reads no import hooks, so ``make lint`` first writes
``build/typing/writegate/``: links to the package root's files and to each mapped folder,
read from the same ``package-dir`` (one source of truth). ``build/`` is not committed.
"""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TREE = ROOT / "build" / "typing"


def package_dirs() -> dict[str, Path]:
    """``writegate.<part>`` → its folder, as ``pyproject.toml`` maps them."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    mapped: dict[str, str] = project["tool"]["setuptools"]["package-dir"]
    return {name: ROOT / folder for name, folder in mapped.items()}


def build() -> Path:
    """Write the tree afresh (a folder added or removed is seen) and return its root."""
    shutil.rmtree(TREE, ignore_errors=True)
    dirs = package_dirs()
    package = TREE / "writegate"
    package.mkdir(parents=True)
    for item in dirs["writegate"].iterdir():
        if item.name != "__pycache__":
            (package / item.name).symlink_to(item)
    for name, folder in dirs.items():
        if name != "writegate":
            (package / name.removeprefix("writegate.")).symlink_to(folder)
    return TREE


if __name__ == "__main__":
    print(build())
