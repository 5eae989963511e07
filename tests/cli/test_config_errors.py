"""A configuration mistake is one line per problem naming the variable or file, the key and
what it takes — never pydantic's class names, its sources, or a Python ``None``."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import SEED_SCHEMA
from tests.console import run as writegate_run
from tests.server.harness import WRITEGATE
from writegate.cli.common import SETTINGS_ENV
from writegate.cli.config import ConfigError, Settings, load_settings


@pytest.fixture(autouse=True)
def _elsewhere(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # no ./writegate.toml
    for name in os.environ:
        if name.startswith("WRITEGATE_"):
            monkeypatch.delenv(name)


def problems(path: Path | None = None) -> tuple[str, ...]:
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    return caught.value.problems


def test_a_list_given_as_a_bare_word_says_it_takes_a_json_list(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WRITEGATE_")} | {
        "WRITEGATE_SERVE__PUBLIC_HOSTS": "memory.example.org"
    }
    done = subprocess.run(
        [WRITEGATE, "--db", str(tmp_path / "x.db"), "serve"],
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr == (
        "error: invalid configuration: environment WRITEGATE_SERVE__PUBLIC_HOSTS: "
        "serve.public_hosts takes a JSON list, such as "
        "WRITEGATE_SERVE__PUBLIC_HOSTS='[\"memory.example.org\"]' (got memory.example.org)\n"
    )


def test_a_bad_environment_value_names_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WRITEGATE_SERVE__PORT", "abc")
    monkeypatch.setenv("WRITEGATE_SERVE__ROLES", '["writer", "boss"]')
    found = problems()
    assert found[0].startswith(
        "invalid configuration: environment WRITEGATE_SERVE__PORT: serve.port should be a "
        "valid integer"
    )
    assert found[0].endswith('(got "abc")')
    assert found[1].startswith(
        "invalid configuration: environment WRITEGATE_SERVE__ROLES: serve.roles[1] should be "
        "'writer', 'reader'"
    )


def test_every_problem_in_a_file_is_named_with_its_key(tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text(
        '[serv]\nport = 1\n\n[serve]\nprot = 1\nport = "x"\n\n'
        '[projections.g]\nkind = "graph"\nretries = 3\n'
    )
    assert problems(config) == (
        f"invalid configuration: {config}: projections.g.uri is required",
        f"invalid configuration: {config}: projections.g.retries is not a setting (known: "
        "batch, database, dialect, kind, password, retry_seconds, uri, user)",
        f"invalid configuration: {config}: serve.port should be a valid integer, unable to "
        'parse string as an integer (got "x")',
        f"invalid configuration: {config}: serve.prot is not a setting (did you mean port?)",
        f"invalid configuration: {config}: [serv] is not a section (did you mean [serve]?)",
    )


def test_a_file_that_is_not_toml_says_where(tmp_path: Path) -> None:
    config = tmp_path / "broken.toml"
    config.write_text("[serve\nport = 1\n")
    assert problems(config) == (
        f"invalid configuration: {config}: not TOML: Expected ']' at the end of a table "
        "declaration (at line 1, column 7)",
    )


def test_a_table_set_only_by_the_environment_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WRITEGATE_PROJECTIONS__G__KIND", "graph")
    monkeypatch.setenv("WRITEGATE_SERVE__OAUTH", "x")
    assert problems() == (
        "invalid configuration: environment WRITEGATE_PROJECTIONS__G__…: projections.g.uri "
        "is required",
        "invalid configuration: environment WRITEGATE_SERVE__OAUTH: serve.oauth should be a "
        'table of settings, not "x"',
    )


def test_a_toml_date_where_a_table_goes_is_said_not_raised(tmp_path: Path) -> None:
    config = tmp_path / "dt.toml"
    config.write_text("serve = 1979-05-27T07:32:00Z\n")
    assert problems(config) == (
        f"invalid configuration: {config}: serve should be a table of settings, not "
        '"1979-05-27 07:32:00+00:00"',
    )


def test_other_writegate_variables_are_no_settings_and_ignored(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    config = tmp_path / "ok.toml"
    config.write_text("[serve]\nport = 9000\n")
    monkeypatch.setenv("WRITEGATE_CONFIG", str(config))
    monkeypatch.setenv("WRITEGATE_SOMETHING_ELSE", "1")
    monkeypatch.setenv("WRITEGATE_OTHER__PART", "2")
    assert load_settings(config).serve.port == 9000


def test_a_key_at_the_top_that_is_no_table_is_no_setting(tmp_path: Path) -> None:
    config = tmp_path / "top.toml"
    config.write_text("projectons = 1\n")
    assert problems(config) == (
        f"invalid configuration: {config}: projectons is not a setting "
        "(did you mean projections or rejections?)",
    )


@pytest.mark.parametrize("field", sorted(Settings.model_fields))
def test_every_setting_is_read_from_the_environment_alone(field: str) -> None:
    """``WRITEGATE_EMBEDDINGS__PROVIDER`` with no config file was ignored: the CLI reads
    settings only when a variable it knows is set, and the list lacked two sections."""
    variable = f"WRITEGATE_{field.upper()}__X"
    assert any(variable.startswith(prefix) for prefix in SETTINGS_ENV), variable


HUGE = "99999999999999999999"


@pytest.mark.parametrize(
    ("toml", "env", "flags", "said"),
    [
        ("[rejections]\nmax_age_days = 1000000\n", {}, (),
         "writegate.toml: rejections.max_age_days should be less than or equal to 100000"),
        (f"[rejections]\nkeep = {HUGE}\n", {}, (),
         "writegate.toml: rejections.keep should be less than or equal to 9223372036854775807"),
        ("", {"WRITEGATE_REJECTION_MAX_AGE_DAYS": "1000000"}, (),
         "WRITEGATE_REJECTION_MAX_AGE_DAYS must be a positive number of days, at most 100,000"),
        ("", {"WRITEGATE_REJECTION_RETENTION": "abc"}, (),
         "WRITEGATE_REJECTION_RETENTION must be a whole number of rows from 0 to"),
        ("", {"WRITEGATE_REJECTION_RETENTION": "-1"}, (),
         "WRITEGATE_REJECTION_RETENTION must be a whole number of rows from 0 to"),
        ("", {}, ("--rejections-max-age", "1e20"),
         "--rejections-max-age must be a positive number of days, at most 100,000"),
    ],
)  # fmt: skip
def test_a_refusal_log_bound_past_what_it_can_hold_is_one_line(
    tmp_path: Path, toml: str, env: dict[str, str], flags: tuple[str, ...], said: str
) -> None:
    """These passed, and then every refused write crashed (a date before year 1, an integer
    SQLite cannot hold) — over MCP an internal error, the refusal unrecorded — or the command
    named no variable (``invalid literal for int()``)."""
    db = tmp_path / "x.db"
    assert writegate_run(["--db", str(db), "init", "--schema", str(SEED_SCHEMA)]).returncode == 0
    if toml:
        (tmp_path / "writegate.toml").write_text(toml)
    command = ["serve", *flags] if flags else ["write", "node", "Person:name=Eve",
               "-p", "confidence=1.0", "--source", "me", "--method", "llm"]  # fmt: skip
    done = writegate_run(["--db", str(db), *command], env=env, cwd=tmp_path, input="")
    [line] = done.stderr.splitlines()
    assert done.returncode in (1, 2)
    assert said in line, line


def test_a_variable_of_a_mistyped_section_is_one_line_naming_the_one_meant(
    tmp_path: Path,
) -> None:
    """``WRITEGATE_SCOPE__DISABLED='["hr"]'`` was ignored: the switch meant to hide a scope
    did not, and nothing said so (the file refused the same typo)."""
    db = tmp_path / "x.db"
    assert writegate_run(["--db", str(db), "init", "--schema", str(SEED_SCHEMA)]).returncode == 0
    env = {"WRITEGATE_SCOPE__DISABLED": '["hr"]'}
    done = writegate_run(["--db", str(db), "search", "Ada"], env=env, cwd=tmp_path)
    assert (done.returncode, done.stderr.splitlines()) == (2, [
        "error: invalid configuration: environment WRITEGATE_SCOPE__DISABLED: scope is not a "
        "section (did you mean WRITEGATE_SCOPES__DISABLED?)"
    ])  # fmt: skip
