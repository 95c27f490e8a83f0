"""The project file (`annotate.toml`, or `--config FILE`): the store, task and protocol folders
and the default protocol for every command; a command-line option beats the environment,
which beats the file, which beats the default."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from annotate import specs
from annotate.cli import app
from annotate.errors import UserError
from annotate.settings import CONFIG_ENV, documented, settings
from annotate.workspace import resolve_url

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(autouse=True)
def clean_settings(monkeypatch, tmp_path):
    """No ANNOTATE_* variable but those a test sets, the current folder empty, and the task
    and protocol files looked up afresh (they are cached per process)."""
    for name in documented():
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    specs.clear_caches()
    yield
    specs.clear_caches()


def run(*args: str) -> tuple[int, str]:
    """`annotate ARGS` in this process, as the console script reports: a UserError is exit
    status 1 and one line."""
    result = CliRunner().invoke(app, list(args))
    if isinstance(result.exception, UserError):
        return 1, f"error: {result.exception}"
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


def toy_project(folder: Path, **keys: str) -> Path:
    """A project in `folder`: the toy task in `toy/`, the example protocol in `protocols/`,
    and an annotate.toml with `keys` (TOML values, as written)."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copytree(EXAMPLES / "toy", folder / "toy")
    shutil.copytree(EXAMPLES / "protocols", folder / "protocols")
    path = folder / "annotate.toml"
    path.write_text("".join(f"{key} = {value}\n" for key, value in keys.items()))
    return path


class TestPrecedence:
    """What wins: the option, then the variable, then the file, then the default."""

    def test_the_store(self, tmp_path, monkeypatch):
        toy_project(tmp_path, db='"from-file.db"')
        assert resolve_url(None) == f"sqlite:///{tmp_path / 'from-file.db'}"
        monkeypatch.setenv("ANNOTATE_DB", "from-env.db")
        assert resolve_url(None) == "sqlite:///from-env.db"
        assert resolve_url("from-option.db") == "sqlite:///from-option.db"
        (tmp_path / "annotate.toml").unlink()
        monkeypatch.delenv("ANNOTATE_DB")
        assert resolve_url(None) == "sqlite:///annotate.db"

    def test_the_default_protocol(self, tmp_path, monkeypatch):
        assert settings().default_protocol == "superglue-2019"
        toy_project(tmp_path, default_protocol='"lab-2026"')
        assert settings().default_protocol == "lab-2026"
        monkeypatch.setenv("ANNOTATE_DEFAULT_PROTOCOL", "quick")
        assert settings().default_protocol == "quick"

    def test_the_task_folders(self, tmp_path, monkeypatch):
        toy_project(tmp_path, tasks_path='["toy"]')
        assert settings().search_path("tasks") == [tmp_path / "toy"]
        monkeypatch.setenv("ANNOTATE_TASKS_PATH", str(tmp_path / "elsewhere"))
        assert settings().search_path("tasks") == [tmp_path / "elsewhere"]

    def test_study_create_takes_the_option_then_the_variable_then_the_file(
        self, tmp_path, monkeypatch
    ):
        toy_project(
            tmp_path,
            db='"lab.db"',
            tasks_path='["toy"]',
            protocols_path='["protocols"]',
            default_protocol='"lab-2026"',
        )
        for split in ("dev", "test"):
            code, out = run(
                "import", "toy", f"toy/{split}.jsonl", "--split", split, "--map", "text=title"
            )
            assert code == 0, out
        code, out = run("study", "create", "a", "--task", "toy", "--training-items", "5")
        assert code == 0 and "protocol lab-2026" in out, out
        monkeypatch.setenv("ANNOTATE_DEFAULT_PROTOCOL", "quick")
        code, out = run("study", "create", "b", "--task", "toy")
        assert code == 0 and "protocol quick" in out, out
        code, out = run("study", "create", "c", "--task", "toy", "--protocol", "superglue-2019")
        assert code == 0 and "protocol superglue-2019" in out, out
        assert (tmp_path / "lab.db").exists()  # the file's store, named relative to it

    def test_without_any_setting_study_create_uses_superglue_2019(self, cli):
        toy = EXAMPLES / "toy"
        for split in ("dev", "test"):
            data = toy / f"{split}.jsonl"
            done = cli("import", toy / "toy.toml", data, "--split", split, "--map", "text=title")
            assert done.code == 0, done.stderr
        done = cli("study", "create", "a", "--task", toy / "toy.toml", "--training-items", "5")
        assert done.code == 0 and "protocol superglue-2019" in done.stdout, done.stderr


class TestRelativePaths:
    """Paths in the file are relative to the file's folder, wherever the command runs."""

    def test_from_another_folder_with_config(self, tmp_path, monkeypatch):
        project = toy_project(
            tmp_path / "project",
            db='"stores/lab.db"',
            tasks_path='["toy"]',
            protocols_path='"protocols"',  # one folder may be a plain string
            default_protocol='"protocols/lab-2026.toml"',
        )
        (tmp_path / "project" / "stores").mkdir()
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        monkeypatch.chdir(elsewhere)
        monkeypatch.setenv(CONFIG_ENV, os.path.relpath(project, elsewhere))
        found = settings()
        assert found.db == str(tmp_path / "project" / "stores" / "lab.db")
        assert found.search_path("tasks") == [tmp_path / "project" / "toy"]
        assert found.search_path("protocols") == [tmp_path / "project" / "protocols"]
        assert found.default_protocol == str(tmp_path / "project" / "protocols" / "lab-2026.toml")

    def test_a_sqlite_url_and_a_home_path(self, tmp_path):
        toy_project(tmp_path, db='"sqlite:///data/x.db"', tasks_path='["~/tasks"]')
        assert settings().db == f"sqlite:///{tmp_path / 'data' / 'x.db'}"
        assert settings().search_path("tasks") == [Path("~/tasks").expanduser()]
        (tmp_path / "annotate.toml").write_text('db = "postgresql+psycopg://ana@db.example/lab"\n')
        assert settings().db == "postgresql+psycopg://ana@db.example/lab"

    def test_a_preset_name_is_not_a_path(self, tmp_path):
        toy_project(tmp_path, default_protocol='"quick"')
        assert settings().default_protocol == "quick"


class TestConfigOption:
    """`annotate --config FILE COMMAND` reads that file instead of ./annotate.toml."""

    def test_tasks_finds_the_folder_the_file_names(self, tmp_path):
        project = toy_project(tmp_path / "project", tasks_path='["toy"]')
        code, out = run("tasks", "--format", "json")
        assert code == 0 and '"toy"' not in out
        specs.clear_caches()  # the task folders are scanned once per process
        code, out = run("--config", str(project), "tasks", "--format", "json")
        assert code == 0 and '"name": "toy"' in out, out
        assert CONFIG_ENV not in os.environ  # the option lasts for its command only

    def test_the_option_beats_the_file_in_the_current_folder(self, tmp_path):
        import json

        toy_project(tmp_path, default_protocol='"quick"')
        other = tmp_path / "other.toml"
        other.write_text('default_protocol = "glue-2019"\n')
        plan = ["plan", "--task", "toy/toy.toml", "--accuracy", "0.9", "--half-width", "0.05"]
        code, quick = run(*plan, "--format", "json")
        assert code == 0, quick
        code, glue = run("--config", str(other), *plan, "--format", "json")
        assert code == 0, glue
        # 5 annotators trained on 6 items (quick) or on 20 (glue-2019)
        assert json.loads(quick)["training_labels"] == 30
        assert json.loads(glue)["training_labels"] == 100

    def test_a_missing_file_is_a_usage_error(self):
        code, out = run("--config", "nowhere.toml", "tasks")
        assert code == 2 and "nowhere.toml" in out

    def test_the_variable_names_the_file_too(self, tmp_path, monkeypatch):
        project = toy_project(tmp_path / "project", tasks_path='["toy"]')
        monkeypatch.setenv(CONFIG_ENV, str(project))
        code, out = run("tasks", "--format", "json")
        assert code == 0 and '"name": "toy"' in out
        monkeypatch.setenv(CONFIG_ENV, str(tmp_path / "gone.toml"))
        with pytest.raises(UserError, match="ANNOTATE_CONFIG=.*gone.toml.*no such file"):
            settings()

    def test_a_missing_file_the_variable_names_is_one_line(self, tmp_path, monkeypatch):
        """It was click's usage error: three lines, status 2, unlike every other setting."""
        monkeypatch.setenv(CONFIG_ENV, str(tmp_path / "gone.toml"))
        assert run("study", "list") == (
            1,
            f"error: ANNOTATE_CONFIG={str(tmp_path / 'gone.toml')!r}: no such file",
        )

    def test_an_edited_file_is_read_again(self, tmp_path):
        path = tmp_path / "annotate.toml"
        path.write_text('default_protocol = "quick"\n')
        assert settings().default_protocol == "quick"
        path.write_text('default_protocol = "glue-2019"  # a longer line\n')
        assert settings().default_protocol == "glue-2019"


class TestMistakes:
    """A mistake in the file is one line naming the file, the line and the reason."""

    @pytest.mark.parametrize(
        ("text", "message"),
        [
            (
                'db = "lab.db"\n\ntasks_path = [tasks]\n',
                "annotate.toml:3: not valid TOML: Invalid value (column 15)",
            ),
            (
                'db = "lab.db"\ntoken = "secret"\n',
                "annotate.toml:2: unknown key 'token' (a project file sets db, tasks_path, "
                "protocols_path, default_protocol)",
            ),
            ("# the store\ndb = 3\n", "annotate.toml:2: db: expected a string, not an integer"),
            (
                'tasks_path = ["a", 1]\n',
                "annotate.toml:1: tasks_path: expected folder names (strings), not an integer",
            ),
            (
                "protocols_path = {a = 1}\n",
                "annotate.toml:1: protocols_path: expected a list of folders, not a table",
            ),
            (
                'default_protocol = ""\n',
                "annotate.toml:1: default_protocol: is empty (leave the key out for the default)",
            ),
            ("\n[db]\nurl = 'x'\n", "annotate.toml:2: db: expected a string, not a table"),
        ],
    )
    def test_the_error_names_file_line_and_reason(self, tmp_path, text: str, message: str):
        (tmp_path / "annotate.toml").write_text(text)
        with pytest.raises(UserError) as raised:
            settings()
        assert str(raised.value) == message

    def test_on_the_command_line_without_a_traceback(self, tmp_path):
        (tmp_path / "annotate.toml").write_text("db = 'lab.db'\ndefault_protocol = 5\n")
        done = subprocess.run(
            [sys.executable, "-m", "annotate", "study", "list"],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        )
        assert done.returncode == 1
        assert done.stderr == (
            "error: annotate.toml:2: default_protocol: expected a string, not an integer\n"
        )
        assert not (tmp_path / "lab.db").exists()

    def test_an_unknown_default_protocol_names_the_file_line_and_setting(self, tmp_path):
        (tmp_path / "annotate.toml").write_text('db = "lab.db"\ndefault_protocol = "nope"\n')
        message = (
            "error: annotate.toml:2: default_protocol: unknown protocol 'nope'; "
            "known: glue-2019, quick, superglue-2019"
        )
        assert run("study", "create", "a", "--task", "superglue/rte") == (1, message)
        plan = ["plan", "--task", "superglue/rte", "--accuracy", "0.9", "--half-width", "0.05"]
        assert run(*plan) == (1, message)
        missing = tmp_path / "other.toml"
        missing.write_text('default_protocol = "lab/nope.toml"\n')
        assert run("--config", str(missing), *plan) == (
            1,
            f"error: {missing}:1: default_protocol: {tmp_path / 'lab' / 'nope.toml'}: "
            "no such protocol file",
        )

    def test_an_unknown_default_protocol_from_the_variable_names_it(self, monkeypatch):
        monkeypatch.setenv("ANNOTATE_DEFAULT_PROTOCOL", "nope")
        plan = ["plan", "--task", "superglue/rte", "--accuracy", "0.9", "--half-width", "0.05"]
        assert run(*plan) == (
            1,
            "error: ANNOTATE_DEFAULT_PROTOCOL='nope': unknown protocol 'nope'; "
            "known: glue-2019, quick, superglue-2019",
        )

    def test_a_file_that_is_not_text(self, tmp_path):
        (tmp_path / "annotate.toml").write_bytes(b"# a lab\ndb = '\xff'\n")
        with pytest.raises(UserError, match=r"^annotate.toml:2: not UTF-8 text \(byte 7 of"):
            settings()


def test_a_mistyped_task_or_protocol_folder_is_named_where_its_task_is_not_found(tmp_path):
    """A folder of tasks_path or protocols_path that is not there was searched as an empty one:
    the error named only the task, and the user hunted for what was wrong with it."""
    (tmp_path / "annotate.toml").write_text(
        'db = "lab.db"\ntasks_path = ["exmaples/toy"]\nprotocols_path = "protocls"\n'
    )
    code, message = run("plan", "--task", "toy", "--accuracy", "0.9", "--half-width", "0.05")
    assert (code, message) == (
        1,
        "error: unknown task 'toy'; `annotate tasks` lists them (no folder "
        f"{tmp_path / 'exmaples' / 'toy'}: check tasks_path or ANNOTATE_TASKS_PATH)",
    )
    plan = ["plan", "--task", "superglue/rte", "--accuracy", "0.9", "--half-width", "0.05"]
    code, message = run(*plan, "--protocol", "lab-2026")
    assert code == 1
    assert message.endswith(
        f"(no folder {tmp_path / 'protocls'}: check protocols_path or ANNOTATE_PROTOCOLS_PATH)"
    )


@pytest.mark.parametrize("how", ["variable", "option"])
def test_a_blank_store_name_is_refused_not_made_a_file(tmp_path, monkeypatch, how):
    """ANNOTATE_DB=" " (a shell's `$DIR/` left empty, say): `init` made a store named " " in
    the current folder, and every command used it."""
    args = ["init"] if how == "variable" else ["--db", " ", "init"]
    if how == "variable":
        monkeypatch.setenv("ANNOTATE_DB", " ")
    assert run(*args) == (
        1,
        "error: the store ' ' (--db or ANNOTATE_DB) is blank: give a SQLite path or a database URL",
    )
    assert list(tmp_path.iterdir()) == []
