"""A store or a spec from someone else is data (issue 47): never a path, never a terminal command,
never the machine's memory. One test (or a few) per class: names checked where they enter
(prag.names), everything printed through prag.text.shown, bounds on what sizes something, and
the tracebacks and words the probes found. Last, a property-based test plays random names, goals
and JSON lines through import, stats, query, compare and run."""
from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path
from typing import TypeVar

import pytest
from conftest import write_spec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console
from support import episode, minilm, run
from typer.testing import CliRunner

from prag.cli import _register, app
from prag.names import RUN_ID_CHARS, run_folder
from prag.store import Store
from prag.store.corrections import Correction
from prag.store.exchange import export_lines
from prag.store.lines import FIELD_CHARS, LINE_BYTES
from prag.text import first_control, hidden, shown

_register()
WIDE = {"COLUMNS": "200"}
T = TypeVar("T")
PLAY = ("--llm", "random", "--rounds", "1", "--limit", "1", "--max-steps", "2", "--no-prior")


def invoke(*args: object, input: str | None = None):
    return CliRunner().invoke(app, [str(a) for a in args], env=WIDE, input=input)


def leaks(text: str) -> list[str]:
    """The characters of printed text a terminal would act on, but the line ends."""
    return [char for char in text if hidden(char) and char != "\n"]


@pytest.fixture
def quick_encoder(monkeypatch):
    """The commands' encoder is the session's MiniLM, loaded once (a run and a query load their own)."""
    monkeypatch.setattr("prag.run.runner.Encoder", lambda *args, **kwargs: minilm())
    monkeypatch.setattr("prag.cli.query_cmd.Encoder", lambda *args, **kwargs: minilm())


# --- names are data ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", [
    "../../../x/escaped", "/abs/path", "a" * 256, "é" * 125, "esc\x1b[2J\x1b[31mRED", "two\nlines", "..", "-x", " x",
], ids=["up", "absolute", "256 characters", "250 bytes", "ESC", "newline", "dot-dot", "option", "space"])
def test_a_run_name_that_is_no_folder_name_is_refused_before_anything_is_written(tmp_path, monkeypatch, name):
    # Before: `--name ../../../tmp/x/escaped` wrote its log outside runs/; 256 characters ended in an
    # OSError traceback (File name too long) with an `interrupted` run left behind.
    work = tmp_path / "a" / "b" / "work"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    spec = write_spec(tmp_path, "pair", ["collect_toys"])
    result = invoke("run", spec, "--name", name, "--store", "s.db", *PLAY)
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert "cannot be a run's id" in " ".join(result.output.split())
    assert not leaks(result.output)
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a", "b", "pair.toml", "work"]


def test_an_imported_name_that_breaks_the_rules_is_refused_by_the_line_that_holds_it(tmp_path):
    with Store(tmp_path / "source.db") as source:
        source.add_run(run("r1"))
        source.add_episode(episode("r1"))
        good = [json.loads(line) for line in export_lines(source)]
    lines = [dict(good[0], id="../../x"), dict(good[1], run_id="/abs"), dict(good[1], task_id="t\x1b]0;title\x07"),
             dict(good[0], id="r2", include_runs=["a/b"]), dict(good[0], id="r3", spec="s" * 300), *good]
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    target = tmp_path / "s.db"
    with Store(target) as store:
        store.add_run(run("mine"))
    result = invoke("import", target, path)
    said = " ".join(result.output.split())
    assert result.exit_code == 1 and "Traceback" not in result.output and not leaks(result.output), result.output
    for line, problem in [(1, "id: it would name a folder outside runs/"), (2, "run_id: it would name a folder outside runs/"),
                          (3, "task_id: it holds the control character '\\x1b'"), (4, "include_runs[0]: it would name a folder"),
                          (5, "spec: 300 characters long, over the 256")]:
        assert f"{path}:{line}: {problem}" in said, said
    assert "5 bad lines" in said and "nothing was imported" in said
    with Store(target) as store:
        assert [r.id for r in store.runs()] == ["mine"]
    assert invoke("import", target, path, "--skip-bad").exit_code == 0
    with Store(target) as store:  # as a set: runs are listed oldest first, to the second, and r1 may be a second older
        assert sorted(r.id for r in store.runs()) == ["mine", "r1"] and store.count("episodes") == 1


def test_a_spec_whose_name_would_lead_out_of_runs_is_refused(tmp_path):
    spec = Path(write_spec(tmp_path, "pair", ["collect_toys"]))
    spec.write_text(spec.read_text().replace('name = "pair"', 'name = "../../up"'))
    result = invoke("run", spec, "--store", tmp_path / "s.db", *PLAY)
    assert result.exit_code == 1 and "'name' '../../up' cannot name a task set" in " ".join(result.output.split())
    assert not (tmp_path / "s.db").exists()


def test_a_run_id_from_before_the_rules_is_resumed_into_a_folder_of_its_own(tmp_path, monkeypatch, quick_encoder):
    """A store written before the rules, or by another program, may hold any run id: resuming it
    writes under runs/ all the same."""
    work = tmp_path / "a" / "b" / "work"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    spec = write_spec(tmp_path, "pair", ["collect_toys", "throw_away_trash"])
    assert invoke("run", spec, "--name", "r", "--store", "s.db", *PLAY).exit_code == 0
    legacy = "../../../escaped\x1b[31m"
    with closing(sqlite3.connect(work / "s.db")) as conn:  # as an older prag or another program could have
        conn.execute("PRAGMA foreign_keys = OFF")
        conn.execute("""update runs set id = ?, status = 'interrupted', rounds = 2,
                        config = json_set(config, '$.experiment.rounds', 2)""", [legacy])
        conn.execute("update episodes set run_id = ?", [legacy])
        conn.commit()
    result = invoke("run", "--resume", legacy, "--store", "s.db")
    assert result.exit_code == 0 and not leaks(result.output), result.output
    folders = [p.relative_to(work) for p in (work / "runs").iterdir()]
    assert len(folders) == 2 and run_folder(Path("runs"), legacy) in folders
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "pair.toml"]


@given(st.text(max_size=300))
def test_every_run_folder_is_a_folder_of_runs(run_id):
    folder = run_folder(Path("runs"), run_id)
    assert folder.parent == Path("runs") and folder.name not in ("", ".", "..") and "/" not in folder.name
    assert len(folder.name.encode("utf-8")) <= 255 and first_control(folder.name) is None


# --- output is escaped ------------------------------------------------------------------------


@given(st.text())
def test_shown_text_holds_nothing_a_terminal_acts_on_and_plain_text_stays_as_it_is(text):
    out = Console(file=open(os.devnull, "w"), record=True, width=10_000, emoji=False)
    out.print(shown(text), highlight=False, soft_wrap=True)
    printed = out.export_text()
    assert not leaks(printed.rstrip("\n")) and "\n" not in printed.rstrip("\n")
    out.print(shown(text, lines=True), highlight=False, soft_wrap=True)
    plain = text.replace("[", "").replace("\\", "")
    assert shown(plain) == plain or first_control(plain) is not None


def test_names_goals_and_transcripts_from_a_store_reach_the_terminal_escaped(tmp_path, quick_encoder):
    """A store written before the rules (or by hand) with ESC and newlines in its names, goals,
    transcripts: every command that prints them shows the characters, none acts on them."""
    db = tmp_path / "s.db"
    evil = "esc\x1b[2J\x1b[31mRED\rforged\x07\u202e"
    with Store(db) as store:
        store.add_run(run("r1"))
        store.add_episode(episode("r1", goal=f"put {evil} away", task_type=evil))
        store.corrections.add(Correction(
            origin="feedback", domain="alfworld", goal=evil, instructions=[evil], verified=False,
            transcript=f">>> wait_for_trigger()\n{{'type': 'dialog', 'text': {evil!r}}}\n", feedback=evil))
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA foreign_keys = OFF")
        conn.execute("update runs set id = ?, llm = ?", [evil, evil])
        conn.execute("update episodes set run_id = ?, task_id = ?", [evil, evil])
        conn.commit()
    outputs = {
        "stats": invoke("stats", db), "compare": invoke("compare", db), "query": invoke("query", db, "put it away"),
        "corrections list": invoke("corrections", "list", db), "corrections show": invoke("corrections", "show", db, 1),
        "delete": invoke("delete", db, "--episode", 1, input="n\n"), "run error": invoke("query", db, "x", "--run", "none"),
    }
    for command, result in outputs.items():
        assert "Traceback" not in result.output and not leaks(result.output), (command, result.output)
        assert "\\x1b" in result.output, (command, result.output)


# --- bounds on what sizes something -------------------------------------------------------------


@pytest.mark.parametrize(("params", "said"), [
    ('env = "grid"\n[params]\ntasks = ["collect_toys"]\nper_task = 100000000', "'per_task' (100000000) ask for 100,000,000 tasks"),
    ('env = "textworld"\n[params]\nchallenge = "tw-coin_collector"\nlevel = 1\nnum_tasks = 1000000000', "'num_tasks' 1000000000 ask for"),
    ('env = "textworld"\n[params]\nchallenge = "custom"\nnb_objects = 100000000\nnum_tasks = 1', "'nb_objects' must be least number of objects, 0 to 1000"),
], ids=["grid per_task", "textworld num_tasks", "textworld nb_objects"])
def test_a_spec_asking_for_more_than_memory_holds_is_refused_before_a_task_is_built(tmp_path, params, said):
    # Before: grid's per_task = 10**8 with --limit 1 grew to 24 GB (the OOM killer ended it);
    # 10**7 under a 3 GB cap ended in a MemoryError traceback.
    spec = tmp_path / "huge.toml"
    spec.write_text(f'name = "huge"\nmax_steps = 5\n{params}\n')
    result = invoke("run", spec, "--store", tmp_path / "s.db", *PLAY)
    said_out = " ".join(result.output.split())
    assert result.exit_code == 1 and said in said_out, result.output
    assert "100,000 a task set may have" in said_out or "0 to 1000" in said_out
    assert not (tmp_path / "s.db").exists()


def test_an_import_line_or_text_past_its_bound_is_refused_by_its_line(tmp_path):
    # Before: one line of 200 MB was imported (1.2 GB at the peak; the store grew by 400 MB).
    with Store(tmp_path / "source.db") as source:
        source.add_run(run("r1"))
        source.add_episode(episode("r1"))
        good = list(export_lines(source))
    long_text = dict(json.loads(good[1]), task_id="t2")
    long_text["steps"][0]["observation"] = "x" * (FIELD_CHARS + 1)
    path = tmp_path / "in.jsonl"
    with path.open("w") as out:
        out.write(good[0] + "\n")
        out.write('{"kind": "episode", "goal": "' + "y" * (LINE_BYTES + 10) + '"}\n')
        out.write(json.dumps(long_text) + "\n")
        out.write(good[1] + "\n")
    result = invoke("import", tmp_path / "s.db", path)
    said = " ".join(result.output.split())
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert f"{path}:2: longer than 16 MiB, the most a line may be" in said
    assert f"{path}:3: steps[0].observation: a text of {FIELD_CHARS + 1:,} characters, over the {FIELD_CHARS:,}" in said
    assert not (tmp_path / "s.db").exists()  # nothing imported: a new store is not left behind


# A person's transcript is a file a user names too (`corrections add --transcript`).
TRANSCRIPT_OF = ("corrections", "add", "{db}", "{spec}", "--task", "collect_toys-0", "--transcript")


@pytest.mark.parametrize("args", [("run", "/dev/urandom", "--store", "{db}"), ("import", "{db}", "/dev/zero"),
                                  (*TRANSCRIPT_OF, "/dev/null")],
                         ids=["spec", "import", "transcript"])
def test_a_device_given_for_a_file_is_refused_as_one(tmp_path, args):
    # Before: `prag run /dev/urandom` said the spec "is empty"; `corrections add --transcript
    # /dev/urandom` read on until the kernel's OOM killer ended it at 21 GB (/dev/null here: it ends).
    spec = write_spec(tmp_path, "pair", ["collect_toys"])
    result = invoke(*(a.format(db=tmp_path / "s.db", spec=spec) for a in args))
    assert result.exit_code == 1 and "is a character device, not a file: give" in " ".join(result.output.split())
    assert not (tmp_path / "s.db").exists()


def opened_by(fifo: Path, call: Callable[[], T]) -> tuple[T, bool]:
    """What `call` returned, and whether it opened the pipe `fifo` and waited there for a writer:
    after 10 s a writer comes and goes, so that such a call ends (and its test fails) instead of
    hanging."""
    done, waited = threading.Event(), []

    def release() -> None:
        wait = 10.0
        while not done.wait(wait):
            with contextlib.suppress(OSError):  # ENXIO: no reader waits on it (yet)
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
                waited.append(True)
            wait = 0.5

    helper = threading.Thread(target=release, daemon=True)
    helper.start()
    try:
        return call(), bool(waited)
    finally:
        done.set()
        helper.join()


@pytest.mark.parametrize("args", [("run", "{pipe}", "--store", "{db}"), ("import", "{db}", "{pipe}"),
                                  (*TRANSCRIPT_OF, "{pipe}")],
                         ids=["spec", "import", "transcript"])
def test_a_pipe_given_for_a_file_is_refused_without_waiting_for_a_writer(tmp_path, args):
    # Before: the check opened the file before it looked at what it was, and opening a pipe waits
    # for a writer: `prag run FIFO`, `prag import s.db FIFO` and `--transcript FIFO` hung for good.
    spec = write_spec(tmp_path, "pair", ["collect_toys"])
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    result, waited = opened_by(pipe, lambda: invoke(*(a.format(db=tmp_path / "s.db", spec=spec, pipe=pipe) for a in args)))
    assert not waited, "the pipe was opened: the command waited for a writer"
    assert result.exit_code == 1 and f"{pipe} is a pipe, not a file: give" in " ".join(result.output.split()), result.output
    assert not (tmp_path / "s.db").exists()


# --- the LLM's timeout and words ------------------------------------------------------------------


@pytest.mark.parametrize("seconds", ["inf", "1e300", "nan", "0"])
def test_a_timeout_no_wait_can_hold_is_refused(tmp_path, seconds):
    # Before: inf or 1e300 ended in an OverflowError traceback, the run left interrupted.
    spec = write_spec(tmp_path, "pair", ["collect_toys"])
    result = invoke("run", spec, "--store", tmp_path / "s.db", "--llm-timeout", seconds, *PLAY)
    assert result.exit_code == 2 and "give more than 0 seconds and at most 86400 (a day)" in " ".join(result.output.split())
    assert not (tmp_path / "s.db").exists()


def test_a_recorded_timeout_no_wait_can_hold_is_refused_on_resume(tmp_path, monkeypatch, quick_encoder):
    monkeypatch.chdir(tmp_path)
    spec = write_spec(tmp_path, "pair", ["collect_toys"])
    assert invoke("run", spec, "--name", "r", "--store", "s.db", *PLAY).exit_code == 0
    with closing(sqlite3.connect(tmp_path / "s.db")) as conn:
        conn.execute("""update runs set status = 'interrupted',
                        config = json_set(config, '$.execution.llm_timeout', 1e300)""")
        conn.commit()
    result = invoke("run", "--resume", "r", "--store", "s.db")
    assert result.exit_code == 1 and "--llm-timeout: give more than 0 seconds and at most 86400" in result.output


def test_a_server_named_by_llm_url_needs_no_openai_key_and_the_error_names_the_option(tmp_path, monkeypatch):
    # Before: "No API key for OpenAI: set OPENAI_API_KEY, or set OPENAI_BASE_URL ..." with --llm-url given.
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    spec = write_spec(tmp_path, "pair", ["collect_toys"])
    result = invoke("run", spec, "--store", "s.db", "--llm", "openai:m", "--llm-url", "http://127.0.0.1:9/v1",
                    "--llm-timeout", "3", "--llm-retries", "0", "--ask", "always", "--sources", "llm", "--limit", "1",
                    "--rounds", "1", "--no-prior", "--name", "r")
    said = " ".join(result.output.split())
    assert result.exit_code == 1 and "No API key" not in said, result.output
    assert "Cannot reach the LLM server at http://127.0.0.1:9/v1" in said and "with --llm-url" in said


# --- tracebacks left, and words -------------------------------------------------------------------


@contextlib.contextmanager
def mounted(directory: Path, *options: str) -> Iterator[Path]:
    """`directory` as a mount of its own (a tmpfs of a size, or a read-only bind mount), for root;
    skipped where mounting is not allowed."""
    directory.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0 or subprocess.run(["mount", *options, str(directory)], capture_output=True).returncode:
        pytest.skip("mounting is not allowed here")
    try:
        yield directory
    finally:
        subprocess.run(["umount", "--lazy", str(directory)], check=True)


@contextlib.contextmanager
def read_only(directory: Path) -> Iterator[Path]:
    with mounted(directory, "--bind", str(directory)):
        if subprocess.run(["mount", "-o", "remount,bind,ro", str(directory)], capture_output=True).returncode:
            pytest.skip("remounting read-only is not allowed here")
        yield directory


def fill(directory: Path) -> None:
    """Take every byte the file system of `directory` has left."""
    with contextlib.suppress(OSError), (directory / "filler").open("wb") as out:
        while True:
            out.write(b"\0" * 4096)
            out.flush()


def test_query_reads_a_read_only_store_whose_index_files_exist_in_memory(tmp_path, quick_encoder):
    # Before: a PermissionError (mode 555) or OSError (read-only file system) traceback from the
    # index's lock, when an earlier query had made the index folder.
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    with Store(shelf / "s.db") as store:
        store.add_run(run("r1"))
        store.add_episode(episode("r1"))
    before = invoke("query", shelf / "s.db", "put an apple in the fridge", "--json")
    assert before.exit_code == 0 and (shelf / "s.db.index").is_dir()
    with read_only(shelf):
        after = invoke("query", shelf / "s.db", "put an apple in the fridge", "--json")
        assert after.exit_code == 0 and "Traceback" not in after.output, after.output
        assert json.loads(after.output[after.output.index("[\n"):]) == json.loads(before.output)


def test_a_store_on_a_full_disk_is_said_to_be_on_a_full_disk(tmp_path):
    # Before: "cannot be read as an SQLite database (disk I/O error)", of an intact store.
    disk = tmp_path / "disk"
    with mounted(disk, "-t", "tmpfs", "-o", "size=600k", "tmpfs"):
        with Store(disk / "s.db") as store:
            store.add_run(run("r1"))
        for left in (disk / "s.db-wal", disk / "s.db-shm"):
            left.unlink(missing_ok=True)
        fill(disk)
        result = invoke("stats", disk / "s.db")
        said = " ".join(result.output.split())
        assert result.exit_code == 1 and f"the disk holding {disk / 's.db'} is full" in said, result.output
        (disk / "filler").unlink()
        assert invoke("stats", disk / "s.db").exit_code == 0


def test_a_run_stopped_by_a_full_disk_says_which_file_and_how_it_left_the_run(tmp_path, monkeypatch, quick_encoder):
    # Before: "the disk has no room (No space left on device)", no path; and a run that the store
    # could not mark was said to be interrupted while it showed `running`.
    spec = write_spec(tmp_path, "pair", ["collect_toys"])
    disk = tmp_path / "disk"
    with mounted(disk, "-t", "tmpfs", "-o", "size=600k", "tmpfs"):
        monkeypatch.chdir(disk)  # runs/ on the full disk, the store elsewhere
        fill(disk)
        result = invoke("run", spec, "--name", "logs", "--store", tmp_path / "s.db", *PLAY)
        said = " ".join(result.output.split())
        assert result.exit_code == 1 and "the disk has no room for runs/logs/log.jsonl" in said, result.output
        assert "The run is interrupted" in said
        (disk / "filler").unlink()
        monkeypatch.chdir(tmp_path)
        with open(disk / "filler", "wb") as out:  # room for the store to be made, not for its episodes
            out.write(b"\0" * (150 << 10))
        many = ("--llm", "random", "--rounds", "20", "--limit", "1", "--max-steps", "5", "--no-prior")
        result = invoke("run", spec, "--name", "store", "--store", disk / "s.db", *many)
        said = " ".join(result.output.split())
        # The store's write, or the index's beside it, finds the disk full first: either names the disk.
        assert result.exit_code == 1, result.output
        assert f"the disk holding {disk / 's.db'} is full" in said or f"the disk has no room for {disk / 's.db.index'}" in said
        # Whether the one-row mark still fit depends on where the disk filled: what is said must be what is stored.
        stale = "could not be marked interrupted (its store took no write), so it shows as `running (stale)`" in said
        assert stale != ("The run is interrupted" in said), said
        (disk / "filler").unlink()
        with Store(disk / "s.db") as store:  # `running` when unmarked: this process, which played it, is alive
            assert store.run("store").status == ("running" if stale else "interrupted")


# --- the property: whatever an import brings ------------------------------------------------------

NAMES = st.one_of(
    st.text(max_size=12),
    st.text(alphabet=st.sampled_from("ab./\\\x1b\n\r\x07\u202e [] -é"), max_size=20),
    st.sampled_from(["..", "../../up", "/abs/x", "-x", "a" * (RUN_ID_CHARS + 1), "esc\x1b[2J\x1b[31mRED", "ok"]),
)
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=10),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                    max_leaves=8)


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> tuple[Path, list[dict]]:
    """A store with a run of its own, and the lines of another store's run and episode to vary."""
    folder = tmp_path_factory.mktemp("base")
    with Store(folder / "mine.db") as store:
        store.add_run(run("mine"))
        store.add_episode(episode("mine"))
    with Store(folder / "theirs.db") as theirs:
        theirs.add_run(run("r1"))
        theirs.add_episode(episode("r1"))
        lines = [json.loads(line) for line in export_lines(theirs)]
    for line in lines:
        line.pop("embeddings", None)  # the goal varies: its vector is encoded when first retrieved
    return folder / "mine.db", lines


def _records(store: Store) -> set[str]:
    """The lines of run `mine` and its episodes, without their vectors."""
    return {json.dumps({k: v for k, v in json.loads(line).items() if k != "embeddings"}) for line in export_lines(store, "mine")}


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(run_id=NAMES, task_id=NAMES, goal=st.text(max_size=30), junk=st.lists(JSON, max_size=2), played=NAMES,
       play=st.booleans())
def test_whatever_an_import_brings_is_refused_or_shown_and_nothing_leaves_prags_folders(
        base, quick_encoder, run_id, task_id, goal, junk, played, play):
    mine, (run_line, episode_line) = base
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        work = root / "a" / "b" / "work"
        work.mkdir(parents=True)
        spec = write_spec(root, "pair", ["collect_toys"])
        store = work / "s.db"
        store.write_bytes(mine.read_bytes())
        with Store(store, create=False) as opened:
            mine_before = _records(opened)
        lines = [dict(run_line, id=run_id), dict(episode_line, run_id=run_id, task_id=task_id, goal=goal)]
        (work / "in.jsonl").write_text("".join(json.dumps(line) + "\n" for line in [*lines, *junk]))
        cwd = Path.cwd()
        os.chdir(work)
        try:
            results = [invoke("import", "s.db", "in.jsonl"), invoke("stats", "s.db"), invoke("compare", "s.db"),
                       invoke("query", "s.db", goal or "goal"), invoke("corrections", "list", "s.db")]
            if play:
                results.append(invoke("run", spec, "--name", played, "--store", "s.db", *PLAY))
        finally:
            os.chdir(cwd)
        for result in results:
            assert result.exit_code in (0, 1, 2) and "Traceback" not in result.output, result.output
            assert not leaks(result.output), result.output
        with Store(store, create=False) as opened:
            ids = [r.id for r in opened.runs()]
            assert mine_before <= _records(opened)  # nothing stored is lost (vectors may be added)
        assert run_id == "mine" or (run_id in ids) == (results[0].exit_code == 0)
        made = {p.relative_to(root) for p in root.rglob("*")} - {Path("pair.toml"), Path("a"), Path("a/b"), Path("a/b/work")}
        for path in made:  # prag's folders: the store and its index, and the runs' folders
            inside = path.relative_to("a/b/work")
            assert inside.parts[0] in ("s.db", "s.db-wal", "s.db-shm", "s.db.index", "in.jsonl", "runs"), path
            if inside.parts[0] == "runs" and len(inside.parts) > 1:
                assert Path(*inside.parts[:2]) in {run_folder(Path("runs"), i) for i in ids}, path
