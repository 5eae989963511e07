"""Every block the README and the guides in docs/ show is pasted by a test, and which test
is written here: a block nobody pastes fails, so a guide cannot show a command, a
configuration or a program that no longer works. Output shown to the reader is fenced
``text`` and is left out (or, for the Python examples, compared with what they print).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.cli.conftest import writegate
from tests.conftest import ROOT
from tests.readme import Block, blocks, every_block, lines, section
from tests.server.harness import WRITEGATE

CLIENTS = "## Connecting Claude, Cursor or the Inspector"
PROJECTIONS = "## Projections: the log replayed into stores"
PASTED_BY = {
    Block("README.md", "## Quick start", "sh", 0): "tests/test_readme_walk.py::test_a_newcomer_follows_the_readme_in_a_fresh_clone",
    Block("README.md", "## Install", "sh", 0): "tests/test_readme_walk.py::test_a_newcomer_follows_the_readme_in_a_fresh_clone",
    Block("README.md", "## First log, first agent", "sh", 0): "tests/test_readme_walk.py::test_a_newcomer_follows_the_readme_in_a_fresh_clone",
    Block("README.md", "## Asking the graph", "sh", 0): "tests/test_readme_pasted.py::test_the_asking_commands_work_as_pasted",
    Block("README.md", "## Asking the graph", "sh", 1): "tests/test_readme_pasted.py::test_the_asking_commands_work_as_pasted",
    Block("README.md", "## Forgetting a person", "sh", 0): "tests/test_readme_pasted.py::test_the_forgetting_commands_work_as_pasted",
    Block("README.md", "## Take back a source", "sh", 0): "tests/test_readme_pasted.py::test_the_retraction_commands_work_as_pasted",
    Block("README.md", CLIENTS, "sh", 0): "tests/server/test_readme_clients.py::test_the_claude_code_commands_work_as_written",
    Block("README.md", CLIENTS, "json", 0): "tests/server/test_readme_clients.py::test_the_stdio_configuration_works_as_written",
    Block("README.md", CLIENTS, "sh", 1): "tests/server/test_readme_clients.py::test_the_http_configuration_works_as_written",
    Block("README.md", CLIENTS, "sh", 2): "tests/server/test_readme_clients.py::test_the_http_configuration_works_as_written",
    Block("README.md", CLIENTS, "json", 1): "tests/server/test_readme_clients.py::test_the_http_configuration_works_as_written",
    Block("README.md", CLIENTS, "sh", 3): "tests/server/test_readme_clients.py::test_the_inspector_command_works_as_written",
    Block("docs/operating.md", PROJECTIONS, "toml", 0): "tests/test_readme_pasted.py::test_the_projections_block_works_as_pasted",
    Block("docs/operating.md", PROJECTIONS, "toml", 1): "tests/test_readme_pasted.py::test_the_graph_registry_snippet_fails_a_write_at_once_when_unreachable",
    Block("docs/operating.md", "## Backups and restore", "sh", 0): "tests/eventlog/test_backup.py::test_the_readme_backup_and_restore_commands_work_as_pasted",
    Block("docs/operating.md", "## Backups and restore", "sh", 1): "tests/eventlog/test_backup.py::test_the_readme_backup_and_restore_commands_work_as_pasted",
    Block("docs/operating.md", "## Importing an existing agent memory", "sh", 0): "tests/test_guides_pasted.py::test_the_import_commands_work_as_pasted",
    Block("docs/postgresql.md", "## The log on PostgreSQL", "sh", 0): "tests/test_readme_pasted.py::test_the_postgres_commands_work_as_pasted",
    Block("docs/postgresql.md", "## Roles: who runs what", "sql", 0): "tests/eventlog/test_postgres_roles.py::test_the_role_setup_runs_as_the_roles_it_names",
    Block("docs/postgresql.md", "## Roles: who runs what", "sql", 1): "tests/eventlog/test_postgres_roles.py::test_the_role_setup_runs_as_the_roles_it_names",
    Block("docs/python-api.md", "# The Python API", "python", 0): "tests/test_guides_pasted.py::test_the_python_examples_print_what_they_show",
    Block("docs/python-api.md", "# The Python API", "python", 1): "tests/test_guides_pasted.py::test_the_python_examples_print_what_they_show",
    Block("docs/schemas.md", "### Authority along the lineage", "yaml", 0): "tests/gate/test_authority.py::test_the_guides_section_is_a_schema_that_ranks_as_it_says",
    Block("docs/schemas.md", "### The review lane", "yaml", 0): "tests/gate/test_review_rules.py::test_the_readme_rules_are_a_schema",
    Block("docs/schemas.md", "### The review lane", "sh", 0): "tests/test_readme_pasted.py::test_the_review_commands_work_as_pasted",
    Block("docs/schemas.md", "### Duplicate entities", "yaml", 0): "tests/gate/test_resolution_gate.py::test_the_readme_example_is_a_schema",
    Block("docs/schemas.md", "#### Evidence fields", "yaml", 0): "tests/resolution/test_evidence.py::test_the_guides_evidence_example_is_a_schema_that_weighs_each_field",
    Block("docs/schemas.md", "#### What identifies: codes and identity fields", "sh", 0): "tests/resolution/test_identity_conflict.py::test_the_guides_identity_commands_work_as_pasted",
    Block("docs/schemas.md", "### Keeping a property out of search", "yaml", 0): "tests/gate/test_unsearchable.py::test_the_guides_example_keeps_the_notes_out",
    Block("docs/schemas.md", "### Merging and unmerging duplicates", "sh", 0): "tests/test_readme_pasted.py::test_the_merge_commands_work_as_pasted",
    Block("docs/serving.md", "### OAuth", "toml", 0): "tests/server/test_oauth.py::test_the_readme_oauth_settings_load",
    Block("docs/serving.md", "## Running writegate as a service", "toml", 0): "tests/server/test_readme_clients.py::test_the_service_configuration_parses",
    Block("docs/serving.md", "## Running writegate as a service", "ini", 0): "tests/server/test_readme_clients.py::test_the_service_configuration_parses",
}  # fmt: skip


def test_every_block_of_the_readme_and_the_guides_is_pasted_by_a_test() -> None:
    """Each block is listed with the test that pastes it; that test exists and its module
    reads the block's section by its heading. A new block, or one moved, fails here until
    a test pastes it."""
    shown = every_block()
    assert [block for block in shown if block not in PASTED_BY] == []
    assert [block for block in PASTED_BY if block not in shown] == []
    for block, test in PASTED_BY.items():
        path, name = test.split("::")
        source = (ROOT / path).read_text(encoding="utf-8")
        assert re.search(rf"^(async )?def {name}\(", source, flags=re.MULTILINE), test
        assert block.heading in source, (block, test)


def test_the_python_examples_print_what_they_show(tmp_path: Path) -> None:
    """The Python API's examples, run one after the other as a reader pastes them into one
    file (beside the repository's fixtures), print the output the guide shows under them
    (``…`` standing for what differs between runs)."""
    text = section("# The Python API", subsections=False)
    (tmp_path / "fixtures").symlink_to(ROOT / "fixtures")
    (tmp_path / "example.py").write_text("\n".join(blocks(text, "python")))
    done = subprocess.run(
        [sys.executable, "example.py"], cwd=tmp_path, capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    shown = "".join(blocks(text, "text"))
    pattern = ".*?".join(re.escape(part) for part in shown.split("…"))
    assert re.fullmatch(pattern, done.stdout), (shown, done.stdout)


def test_the_import_commands_work_as_pasted(tmp_path: Path) -> None:
    """The import commands, from a folder holding the repository's fixtures: the schema
    converted and published, then the file rehearsed and imported — each reporting the
    example's two refused items and its malformed line by number, and exiting 1 as the
    guide says."""
    [block] = blocks(section("## Importing an existing agent memory"), "sh")
    (tmp_path / "fixtures").symlink_to(ROOT / "fixtures")
    env = {"PATH": f"{Path(WRITEGATE).parent}:/usr/bin:/bin", "HOME": str(tmp_path)}
    codes, said = [], []
    for command in lines(block):
        done = subprocess.run(
            command, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True,
            timeout=120, check=False,
        )  # fmt: skip
        assert "Traceback" not in done.stderr, done.stderr
        codes.append(done.returncode)
        said.append(done.stdout + done.stderr)
    assert codes == [0, 0, 1, 1]
    assert "would reject 2 items, 1 malformed line" in said[2]
    assert "rejected 2 items, 1 malformed line" in said[3]
    assert "line 8: MALFORMED_LINE" in said[3]
    log = writegate(tmp_path / "imported.db", "log", "--format", "jsonl").stdout
    assert log.count('"node.written"') + log.count('"relationship.written"') == 7


def test_the_import_commands_pasted_after_the_readme_leave_its_log_alone(tmp_path: Path) -> None:
    """A reader who pasted the README's first log, then the guide's import block, in one
    folder (issue 42, defect 9): the import lands in its own log, and the README's keeps
    only what the README wrote (no fallback ``Entity`` nodes from the MemoryMesh file)."""
    [readme] = blocks(section("## First log, first agent"), "sh")
    [guide] = blocks(section("## Importing an existing agent memory"), "sh")
    (tmp_path / "fixtures").symlink_to(ROOT / "fixtures")
    env = {"PATH": f"{Path(WRITEGATE).parent}:/usr/bin:/bin", "HOME": str(tmp_path)}

    def paste(block: str) -> list[int]:
        codes = []
        for command in lines(block):
            done = subprocess.run(
                command, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True,
                timeout=120, check=False,
            )  # fmt: skip
            assert "Traceback" not in done.stderr, done.stderr
            codes.append(done.returncode)
        return codes

    paste(readme)
    before = writegate(tmp_path / "memory.db", "log", "--format", "jsonl").stdout
    assert paste(guide) == [0, 0, 1, 1]
    after = writegate(tmp_path / "memory.db", "log", "--format", "jsonl").stdout
    assert after == before
    assert '"label":"Entity"' not in after
    imported = writegate(tmp_path / "imported.db", "log", "--format", "jsonl").stdout
    assert imported.count('"node.written"') + imported.count('"relationship.written"') == 7
