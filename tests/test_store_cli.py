"""`prag query`, `stats`, `export`, `import`, `delete` through typer's test runner, with the real
MiniLM: what they print, what bad input and damaged files get, and that a damaged file is left as it was."""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys

import pytest
from conftest import write_spec
from support import damage_a_page_of, episode, minilm, run, stored_steps
from typer.testing import CliRunner

from prag.cli import _register, app
from prag.retrieval.embed import EmbeddingCache
from prag.store import Store

_register()
runner = CliRunner()

GOALS = [
    ("put a clean apple in the fridge", True, 0),
    ("heat some egg and put it on the countertop", False, 0),
    ("look at the book under the desklamp", True, 1),
    ("put a clean apple in the fridge", True, 1),
]


@pytest.fixture(scope="module")
def store_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "demo.db"
    with Store(path) as store:
        store.add_run(run("demo", rounds=2))
        cache = EmbeddingCache(store, minilm())
        for n, (goal, won, round_) in enumerate(GOALS):
            record = episode("demo", round_, f"t{n}", goal=goal, won=won,
                             scenes=("at: kitchen", f"at: fridge 1\napple {n} in fridge 1"))
            cache.vectors([record.goal] + [s.scene for s in record.steps])
            store.add_episode(record)
    return path


def invoke(*args: str, input: str | None = None):
    return runner.invoke(app, [str(a) for a in args], input=input, env={"COLUMNS": "200"})


def test_query_ranks_the_matching_goal_first(store_path):
    result = invoke("query", store_path, "put an apple in the refrigerator", "--k", "2", "--json")
    assert result.exit_code == 0, result.output
    hits = json.loads(result.output)
    assert [h["goal"] for h in hits] == ["put a clean apple in the fridge"] * 2
    assert [h["episode_id"] for h in hits] == [1, 4]  # equal scores: the older episode first


def test_query_with_scene_shows_score_parts_in_a_table(store_path):
    result = invoke("query", store_path, "look at a book", "--scene", "at: fridge 1\napple 2 in fridge 1", "--k", "1")
    assert result.exit_code == 0, result.output
    assert "look at the book under the desklamp" in result.output
    assert "mode prag" in result.output and "best t" in result.output


def test_query_as_of_a_round_sees_earlier_rounds_only(store_path):
    result = invoke("query", store_path, "look at a book", "--run", "demo", "--round", "1", "--k", "5", "--json")
    assert {h["round"] for h in json.loads(result.output)} == {0}


def test_stats_reports_success_per_round_and_cache(store_path):
    result = invoke("stats", store_path, "--json")
    assert result.exit_code == 0, result.output
    stats = json.loads(result.output)
    assert [(r["round"], r["episodes"], r["won"]) for r in stats["rounds"]] == [(0, 2, 1), (1, 2, 2)]
    assert stats["episodes"] == 4 and stats["steps"] == 8
    # 3 distinct goals + "at: kitchen" + 4 fridge scenes: repeated texts are embedded once
    assert stats["vectors"]["all-MiniLM-L6-v2"] == 3 + 1 + 4
    table = invoke("stats", store_path)
    assert "success per round" in table.output and "50.0%" in table.output


def test_export_then_import_through_the_cli(store_path, tmp_path):
    exported = invoke("export", store_path)
    assert exported.exit_code == 0
    (tmp_path / "e.jsonl").write_text(exported.output)
    result = invoke("import", tmp_path / "copy.db", tmp_path / "e.jsonl")
    assert result.exit_code == 0 and "imported 4 episodes" in result.output
    assert invoke("export", tmp_path / "copy.db").output == exported.output


@pytest.mark.parametrize(
    "args, message",
    [
        (("query", "{missing}", "goal"), "no store at"),
        (("stats", "{missing}"), "no store at"),
        (("query", "{empty}", "goal"), "has no episodes yet"),
        (("query", "{store}", "goal", "--mode", "sg"), "unknown retrieval mode 'sg'"),
        (("query", "{store}", "goal", "--mode", "prag"), "needs a scene graph"),
        (("stats", "{foreign}"), "not an SQLite database"),
        (("import", "{store}", "{missing}"), "no file"),
    ],
)
def test_bad_input_gets_a_clear_message_and_no_traceback(store_path, tmp_path, args, message):
    empty = tmp_path / "empty.db"
    Store(empty).close()
    foreign = tmp_path / "notes.txt"
    foreign.write_text("shopping list\n" * 20)
    paths = {"missing": tmp_path / "missing.db", "empty": empty, "store": store_path, "foreign": foreign}
    result = invoke(*[a.format(**paths) for a in args])
    assert result.exit_code == 1
    assert message in result.output
    assert "Traceback" not in result.output


# --- import: every line checked first ----------------------------------------------------------------


def exported(store_path, tmp_path):
    lines = invoke("export", store_path).output.splitlines()
    assert len(lines) == 5  # the run and its four episodes
    return lines


def test_a_bad_file_imports_nothing_and_leaves_no_new_store(store_path, tmp_path):
    lines = exported(store_path, tmp_path)
    episode = json.loads(lines[2])
    episode["won"] = "no"
    lines[2] = json.dumps(episode)
    (tmp_path / "bad.jsonl").write_text("\n".join(lines) + "\n")
    result = invoke("import", tmp_path / "new.db", tmp_path / "bad.jsonl")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert f"1 bad line in {tmp_path / 'bad.jsonl'}; nothing was imported" in result.output
    assert "bad.jsonl:3: won: input should be a valid boolean, got \"no\"" in result.output
    assert not (tmp_path / "new.db").exists()


def test_skip_bad_imports_the_good_lines_and_lists_the_bad(store_path, tmp_path):
    lines = exported(store_path, tmp_path)
    lines[4] = lines[4].replace('"t": 1', '"t": "x"')
    (tmp_path / "bad.jsonl").write_text("\n".join(lines) + "\n")
    result = invoke("import", tmp_path / "new.db", tmp_path / "bad.jsonl", "--skip-bad")
    assert result.exit_code == 0, result.output
    assert "imported 3 episodes (1 new runs), 0 corrections, 0 prior loads, 0 ask policies, 0 action models; skipped 0 already stored" in result.output
    assert "skipped 1 bad lines:" in result.output and 'bad.jsonl:5: steps[1].t: input should be a valid integer, got "x"' in result.output


def test_import_reads_standard_input(store_path, tmp_path):
    result = invoke("import", tmp_path / "new.db", "-", input="\n".join(exported(store_path, tmp_path)) + "\n")
    assert result.exit_code == 0 and "imported 4 episodes" in result.output


# --- delete ------------------------------------------------------------------------------------------


def copy_of(store_path, tmp_path):
    copy = tmp_path / "copy.db"
    target = sqlite3.connect(copy)
    with Store(store_path) as store:  # through the store: a consistent copy with its WAL applied
        store.db.conn.backup(target)
    target.close()
    return copy


def test_delete_asks_first_unless_yes_is_given(store_path, tmp_path):
    path = copy_of(store_path, tmp_path)
    for answer in ("n\n", None):  # no, or no answer at all (end of input)
        declined = invoke("delete", path, "--episode", 2, input=answer)
        assert declined.exit_code == 1 and "nothing deleted: answer y to delete episode 2" in declined.output
    agreed = invoke("delete", path, "--episode", 2, input="y\n")
    assert agreed.exit_code == 0, agreed.output
    assert "delete episode 2 (t1, run demo round 0, 1 actions) from" in agreed.output
    assert "deleted episode 2 (t1, run demo round 0, 1 actions): 1 episodes, 2 steps, 2 vectors no other text uses" in agreed.output
    stats = json.loads(invoke("stats", path, "--json").output)
    assert (stats["episodes"], stats["steps"], stats["vectors"]["all-MiniLM-L6-v2"]) == (3, 6, 8 - 2)
    whole = invoke("delete", path, "--run", "demo", "--yes")
    assert whole.exit_code == 0 and "deleted run demo with its 3 episodes: 3 episodes, 6 steps, 6 vectors" in whole.output
    assert json.loads(invoke("stats", path, "--json").output)["vectors"] == {}


@pytest.mark.parametrize(
    "args, message",
    [
        ((), "give --episode ID or --run RUN (one of them)"),
        (("--episode", "1", "--run", "demo"), "give --episode ID or --run RUN (one of them)"),
        (("--episode", "99", "--yes"), "no episode 99"),
        (("--run", "nope", "--yes"), "no run 'nope'"),
    ],
)
def test_delete_says_what_is_wrong(store_path, args, message):
    result = invoke("delete", store_path, *args)
    assert result.exit_code == 1 and message in result.output and "Traceback" not in result.output


# --- damaged files and run states --------------------------------------------------------------------


@pytest.fixture
def damaged(tmp_path):
    path = tmp_path / "broken.db"
    stored_steps(path)
    damage_a_page_of(path)
    return path


@pytest.mark.parametrize(
    "args",
    [
        ("stats", "{db}"),
        ("stats", "{db}", "--json"),
        ("query", "{db}", "put a clean apple in the fridge"),
        ("export", "{db}"),
        ("import", "{db}", "{lines}"),
        ("delete", "{db}", "--run", "r1", "--yes"),
        ("run", "{spec}", "--store", "{db}", "--rounds", "1", "--no-prior"),
    ],
)
def test_a_damaged_store_is_refused_with_a_way_to_recover_and_left_as_it_was(damaged, tmp_path, monkeypatch, args):
    monkeypatch.chdir(tmp_path)  # a run would write runs/ here; it is refused before it builds its LLM
    lines = tmp_path / "one.jsonl"
    lines.write_text(json.dumps({"kind": "run", "id": "x", "spec": "s", "llm": "l", "mode": "prag", "k": 1, "rounds": 1}) + "\n")
    spec = write_spec(tmp_path, "one", ["throw_away_trash"])
    before = hashlib.sha256(damaged.read_bytes()).hexdigest()
    result = invoke(*[a.format(db=damaged, lines=lines, spec=spec) for a in args])
    assert result.exit_code == 1
    assert f"{damaged} is damaged (" in result.output and f"`sqlite3 {damaged} .recover | sqlite3 " in result.output
    assert "Traceback" not in result.output
    assert hashlib.sha256(damaged.read_bytes()).hexdigest() == before
    with Store(damaged) as store:
        assert [r.id for r in store.runs()] == ["r1"]


def test_stats_shows_a_run_whose_process_is_gone_as_stale(store_path, tmp_path):
    path = copy_of(store_path, tmp_path)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    with Store(path) as store:
        store.add_run(run("live"))  # claimed by this process
        store.add_run(run("killed"))
        with store.transaction() as conn:  # as a process that was killed left it
            conn.execute("update runs set claim_pid = ?, claim_started = '1' where id = 'killed'", [gone.pid])
    result = invoke("stats", path, "--json")
    assert {r["id"]: r["status"] for r in json.loads(result.output)["runs"]} == {
        "demo": "running", "live": "running", "killed": "running (stale)",  # demo: this process's
    }
    assert "running (stale)" in invoke("stats", path).output


def test_query_reading_shows_what_the_words_name_in_a_room(store_path):
    result = invoke("query", store_path, "--reading", "Take the apple from the sink and put it in the cupboard.",
                    "--room", "cabinet,sinkbasin,countertop", "--json")
    assert result.exit_code == 0, result.output
    best = json.loads(result.output)["readings"][0]
    assert (best["sentence"], best["source"]) == ("put a apple in cabinet", "words")
    assert "cupboard" in best["why"]


@pytest.fixture
def read_only_store(store_path, tmp_path):
    """A copy of the module's store in a directory prag may not write to: mode 555, or for root,
    whom modes do not stop, a read-only bind mount (skipped where root may not mount)."""
    directory = tmp_path / "shelf"
    directory.mkdir()
    copy = directory / "demo.db"
    with sqlite3.connect(store_path) as source, sqlite3.connect(copy) as target:
        source.backup(target)
    if os.geteuid() != 0:
        directory.chmod(0o555)
        yield copy
        directory.chmod(0o755)
        return
    if subprocess.run(["mount", "--bind", directory, directory], capture_output=True).returncode:
        pytest.skip("root may not mount here: no read-only directory to test with")
    try:
        if subprocess.run(["mount", "-o", "remount,bind,ro", directory], capture_output=True).returncode:
            pytest.skip("root may not remount read-only here")
        yield copy
    finally:
        subprocess.run(["umount", "--lazy", directory], check=True)  # lazy: a file a failed test left open


@pytest.mark.parametrize("args", [
    ["stats", "--json"], ["export"], ["query", "{store}", "put an apple in the fridge", "--json"],
    ["compare", "{store}", "demo", "--json"], ["corrections", "list", "{store}", "--json"],
], ids=lambda args: args[0])
def test_the_commands_that_only_read_work_on_a_store_in_a_read_only_directory(read_only_store, store_path, args):
    # Before: "cannot be read as an SQLite database (unable to open database file)".
    argv = [a.replace("{store}", str(read_only_store)) for a in args]
    if "{store}" not in args:
        argv.insert(1, str(read_only_store))
    result = invoke(*argv)
    assert result.exit_code == 0, result.output
    same = invoke(*[a.replace(str(read_only_store), str(store_path)) for a in argv])
    assert result.output.replace(str(read_only_store), str(store_path)) == same.output
    assert sorted(p.name for p in read_only_store.parent.iterdir()) == ["demo.db"]


def test_a_write_into_a_store_in_a_read_only_directory_says_so_and_what_to_do(read_only_store, store_path, tmp_path):
    export = tmp_path / "demo.jsonl"
    export.write_text(invoke("export", store_path).output)
    for args in (["import", read_only_store, export], ["delete", read_only_store, "--run", "demo", "--yes"]):
        result = invoke(*args)
        message = " ".join(result.output.split())
        assert result.exit_code == 1 and "Traceback" not in result.output, result.output
        assert f"{read_only_store} is read-only for prag (" in message and "this command writes into the store" in message
        assert "The commands that only read (stats, export, query, compare) work on it" in message
        assert "copy" in message and "demo.db-wal" in message
    for new in (read_only_store.parent / "new.db", read_only_store.parent / "sub" / "new.db"):
        result = invoke("import", new, export)
        message = " ".join(result.output.split())
        assert result.exit_code == 1 and "Traceback" not in result.output, result.output
        assert f"{new} cannot be created" in message and "give a store path in a directory you may write to" in message
