"""The built wheel installs as one package, ``writegate``, and lives beside anything else.

Nothing here runs from the checkout: the wheel is built from a copy of the tracked files,
installed into a fresh virtual environment (its dependencies are the test venv's, reached
through a path file, so nothing is downloaded) and run from a directory outside the
repository. A second distribution that ships a top-level ``cli`` package — the name that
used to collide — is installed beside it and removed again.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest
from playwright.sync_api import expect, sync_playwright

from tests.conftest import ROOT, SEED_SCHEMA
from tests.desk.conftest import Desk, build_log
from tests.desk.test_desk_browser import chromium, node_url, sign_in
from tests.server.harness import http_server, stdio_agent
from writegate.gate.server.tokens import create_token

pytestmark = pytest.mark.slow


def _run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, f"{args[:3]} failed: {done.stderr[-2000:]}"
    return done.stdout


def _tracked_copy(target: Path) -> Path:
    """setuptools builds inside the source tree: build from a copy of what git tracks."""
    tracked = _run("git", "ls-files", cwd=ROOT).split()
    for name in tracked:
        source = ROOT / name
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        if source.is_file():
            shutil.copy2(source, target / name)
    return target


def _other_tool(target: Path) -> Path:
    """A distribution shipping a top-level ``cli`` package with ``cli/main.py``."""
    (target / "cli").mkdir(parents=True)
    (target / "cli" / "__init__.py").write_text("")
    (target / "cli" / "main.py").write_text("def main() -> None:\n    print('other tool')\n")
    (target / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=69"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "other-tool"\nversion = "1.0"\n'
        '[project.scripts]\nother-tool = "cli.main:main"\n'
        '[tool.setuptools]\npackages = ["cli"]\n'
    )
    return target


@dataclass(frozen=True)
class Installed:
    bin: Path
    added: set[str]  # what installing the wheel added to site-packages


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """A fresh venv with the wheel installed."""
    work = tmp_path_factory.mktemp("installed")
    source = _tracked_copy(work / "source")
    wheels = work / "wheels"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    _run(*pip, "wheel", "--quiet", "--no-deps", "--wheel-dir", wheels, source, cwd=work)
    env_dir = work / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    site = Path(
        sysconfig.get_path("purelib", vars={"base": str(env_dir), "platbase": str(env_dir)})
    )
    # the dependencies: the test venv's site-packages (a path file adds the directory; the
    # path files inside it, among them the checkout's editable install, are not processed)
    (site / "test-venv-dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    before = set(os.listdir(site))
    wheel = next(wheels.glob("writegate-*.whl"))
    _run(
        env_dir / "bin" / "python", "-m", "pip", "install", "--quiet", "--no-deps", wheel, cwd=work
    )
    return Installed(env_dir / "bin", set(os.listdir(site)) - before)


def test_only_writegate_lands_in_site_packages(installed: Installed) -> None:
    assert installed.added == {"writegate", "writegate-0.1.0.dist-info"}


def test_the_package_is_imported_from_site_packages_with_its_data(
    installed: Installed, tmp_path: Path
) -> None:
    probe = (
        "import writegate.gate.server.policy as p, writegate.gate.version as v; "
        "print(p.__file__); print(v.__version__); print(len(p.Policy.load().text))"
    )
    where, version, size = _run(installed.bin / "python", "-c", probe, cwd=tmp_path).split()
    assert where.startswith(str(installed.bin.parent))
    assert "site-packages" in where
    assert version == "0.1.0"
    assert int(size) == len((ROOT / "gate" / "server" / "policies.cedar").read_text())


def test_a_package_with_a_top_level_cli_does_not_collide(
    installed: Installed, tmp_path: Path
) -> None:
    other = _other_tool(tmp_path / "other")
    pip: list[str | Path] = [installed.bin / "python", "-m", "pip", "--disable-pip-version-check"]
    _run(*pip, "install", "--quiet", other, cwd=tmp_path)
    try:
        assert _run(installed.bin / "other-tool", cwd=tmp_path).strip() == "other tool"
        assert "Usage: writegate" in _run(installed.bin / "writegate", "--help", cwd=tmp_path)
    finally:
        _run(*pip, "uninstall", "--yes", "--quiet", "other-tool", cwd=tmp_path)
    assert "Usage: writegate" in _run(installed.bin / "writegate", "--help", cwd=tmp_path)


@pytest.mark.anyio
async def test_writegate_serve_runs_from_the_wheel(installed: Installed, tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    _run(installed.bin / "writegate", "--db", db, "init", "--schema", SEED_SCHEMA, cwd=tmp_path)
    async with stdio_agent(db, command=str(installed.bin / "writegate")) as agent:
        outcome = await agent.call(
            "write_node",
            {
                "label": "Person",
                "merge_keys": {"name": "Ada"},
                "properties": {"age": 36},
                "source": "test",
                "extraction_method": "manual",
            },
        )
    assert not outcome.is_error, outcome.data
    assert outcome.data["seq"] == 2


CONTRACT_RUN = """
import sqlite3, sys, unittest
from writegate.eventlog import EventLog
from writegate.eventlog.tables import APPEND_ONLY_TRIGGERS, create_tables
from writegate.eventlog import testing as log_contract
from writegate.projections import testing as projector_contract
from writegate.projections.statestore import StateStore

class TestLog(log_contract.LogContractTestCase):
    __test__ = True
    def create_log_at(self, name):
        return EventLog(self.scratch / f"{name}.db")
    def rewrite(self, log, sql):
        conn = sqlite3.connect(log.path, isolation_level=None)
        try:
            conn.execute(sql)
        finally:
            conn.close()
    def tamper(self, log, seq):
        conn = sqlite3.connect(log.path, isolation_level=None)
        for trigger in APPEND_ONLY_TRIGGERS:
            conn.execute(f"DROP TRIGGER {trigger}")
        conn.execute("UPDATE events SET payload = '{}' WHERE seq = ?", (seq,))
        conn.close()

class TestState(projector_contract.ProjectorContractTestCase):
    __test__ = True
    def create(self):
        return StateStore(self.scratch / "state.db")

# (the base cases are not in this module's namespace, so unittest runs only these)
result = unittest.main(argv=["contract"], exit=False).result
sys.exit(0 if result.wasSuccessful() and result.testsRun > 20 else 1)
"""


def test_the_contract_test_cases_ship_and_pass_from_the_wheel(
    installed: Installed, tmp_path: Path
) -> None:
    script = tmp_path / "run_contracts.py"
    script.write_text(CONTRACT_RUN)
    _run(installed.bin / "python", script, cwd=tmp_path)


def test_the_desk_served_from_the_wheel_draws_its_graph(
    installed: Installed, tmp_path: Path
) -> None:
    """Issue 42, defect 1: the drawing script was a 404 unless ``make test`` had copied it."""
    db = tmp_path / "desk.db"
    build_log(db, tmp_path)
    token = create_token(Path(f"{db}.tokens.json"), "rita", ("reader",))
    shipped = (ROOT / "gate" / "desk" / "static" / "vendor" / "cytoscape.min.js").read_bytes()
    with http_server(db, command=str(installed.bin / "writegate")) as server:
        desk = Desk(server, db, {"reader": token})
        script = httpx2.get(f"{desk.url}/static/vendor/cytoscape.min.js", timeout=30)
        assert script.status_code == 200
        assert script.content == shipped
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
            try:
                page = sign_in(browser, desk, "reader")
                page.goto(node_url(desk, "Ada"))
                expect(page.locator("#graph canvas").first).to_be_attached()  # it drew
            finally:
                browser.close()
