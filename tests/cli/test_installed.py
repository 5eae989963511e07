"""An installed writegate (a real, non-editable install of this checkout) works away from
the repository: its default policy ships inside the package."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_an_installed_package_finds_its_default_policy(tmp_path: Path) -> None:
    source = tmp_path / "source"  # setuptools builds in the source tree: use a copy
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.split()
    for name in tracked:
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--target",
            target,
            source,
        ],
        check=True,
        capture_output=True,
        timeout=600,
    )
    installed = target / "gate" / "server" / "policies.cedar"
    assert installed.read_bytes() == (ROOT / "gate" / "server" / "policies.cedar").read_bytes()
    probe = (
        "import gate.server.policy as p; "
        f"assert p.__file__.startswith({str(target)!r}), p.__file__; "
        "print(p.Policy.load().text, end='')"
    )
    env = {**os.environ, "PYTHONPATH": str(target)}
    out = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=tmp_path,  # not the repository: nothing resolves from the checkout
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.stdout == installed.read_text(encoding="utf-8")  # parsed by cedarpy on load
