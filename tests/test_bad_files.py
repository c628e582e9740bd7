"""Files that are not what they claim (issue 22): every file a user names to prag (a spec, a
Revisiting ALFRED commands file, a JSON Lines import, a GGUF model file) gets a clear error when it
is not UTF-8 text, a directory, empty or huge: the file named, what is wrong, what to give, no
traceback, and no store created. Before, a spec of random bytes printed a UnicodeDecodeError
traceback, an import of one too, and a model file of random bytes failed at the first LLM call."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import write_spec
from support import run as run_record
from typer.testing import CliRunner

from prag.cli import _register, app
from prag.files import TEXT_LIMIT
from prag.store import Store

_register()


def binary(path: Path) -> None:
    path.write_bytes((bytes(range(0x80, 0x100)) + bytes(range(0x80))) * 16)  # a lone 0x80 is never UTF-8


def directory(path: Path) -> None:
    path.mkdir()


def empty(path: Path) -> None:
    path.write_bytes(b"")


def huge(path: Path) -> None:
    with path.open("wb") as handle:  # sparse: no disk is written
        handle.truncate(TEXT_LIMIT + 1)


SAID = {
    binary: "is not UTF-8 text (line 1: byte 0x80 is not UTF-8)",
    directory: "is a directory: give",
    empty: "is empty: give",
    huge: "too big for",
}


def invoke(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "300"})


def refused(result, *said: str) -> None:
    output = " ".join(result.output.split())
    assert result.exit_code == 1, result.output
    assert all(part in output for part in said), result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("make", [binary, directory, empty, huge], ids=lambda f: f.__name__)
def test_a_spec_that_is_not_toml_text_is_refused_before_a_store_is_created(tmp_path, make):
    spec, db = tmp_path / "bad.toml", tmp_path / "s.db"
    make(spec)
    refused(invoke("run", spec, "--store", db), str(spec), SAID[make], "a task-set spec (TOML text)")
    refused(invoke("envs", "play", spec), str(spec), SAID[make])
    assert not db.exists()


@pytest.mark.parametrize("make", [binary, directory, empty, huge], ids=lambda f: f.__name__)
def test_a_commands_file_that_is_not_json_text_is_refused_before_a_store_is_created(alfworld_data, tmp_path, make):
    commands, db = tmp_path / "commands.json", tmp_path / "s.db"
    make(commands)
    spec = tmp_path / "refined.toml"
    spec.write_text(
        'env = "alfworld"\nmax_steps = 30\n[params]\nsplit = "valid_seen"\n'
        f'data_dir = {json.dumps(str(alfworld_data))}\nper_type = 1\n'
        f'goals = {{ file = {json.dumps(str(commands))}, field = "refined" }}\n'
    )
    refused(invoke("run", spec, "--store", db), str(commands), SAID[make], "a Revisiting ALFRED commands file")
    assert not db.exists()


@pytest.mark.parametrize("make", [binary, directory, empty], ids=lambda f: f.__name__)
def test_an_import_that_is_not_json_lines_text_imports_nothing_and_creates_no_store(tmp_path, make):
    source, db = tmp_path / "in.jsonl", tmp_path / "s.db"
    make(source)
    said = "is not a JSON Lines file written by `prag export`: its first line is not UTF-8 text" if make is binary else SAID[make]
    refused(invoke("import", db, source), str(source), said)
    assert not db.exists()


def test_an_import_with_a_line_that_is_not_utf8_names_the_line_and_imports_nothing(tmp_path):
    good, db = tmp_path / "good.jsonl", tmp_path / "s.db"
    with Store(tmp_path / "source.db") as store:
        store.add_run(run_record("r1"))
    assert invoke("export", tmp_path / "source.db").exit_code == 0
    good.write_text(invoke("export", tmp_path / "source.db").output)
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_bytes(good.read_bytes() + b'{"kind": "run", "id": "caf\xe9"}\n')
    refused(invoke("import", db, mixed), f"1 bad line in {mixed}; nothing was imported",
            f"{mixed}:2: not UTF-8 text (byte 0xe9 at column 27)")
    assert not db.exists()
    refused(CliRunner().invoke(app, ["import", str(db), "-"], input=b""), "standard input is empty")


@pytest.mark.parametrize("make", [binary, directory, empty], ids=lambda f: f.__name__)
def test_a_model_file_that_is_not_gguf_is_refused_before_a_store_is_created(tmp_path, make):
    model, db = tmp_path / "model.gguf", tmp_path / "s.db"
    make(model)
    spec = write_spec(tmp_path, "pair", ["throw_away_trash", "collect_toys"])
    said = "is not a GGUF model file" if make is binary else SAID[make]
    refused(invoke("run", spec, "--store", db, "--llm", f"local:{model}"), str(model), said)
    assert not db.exists()
