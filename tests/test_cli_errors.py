"""Bad input at the command line (issue 11): every one a clear message and exit code, with no
traceback; specs and options checked before a store file or a run row is created; negative and
zero values refused by every command; user text and paths printed as they are (`[x]` is not
markup); `prag query` with a run or round that does not exist. Real grid specs and real stores."""
from __future__ import annotations

import dataclasses
import json

import pytest
from conftest import write_spec
from support import episode, minilm, run
from typer.testing import CliRunner

from prag.cli import _register, app
from prag.retrieval.embed import EmbeddingCache
from prag.store import Store
from prag.store.records import RunRecord

_register()
NARROW = {"COLUMNS": "80"}


def invoke(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args], env=NARROW)


def refused(result, message: str, code: int = 1) -> None:
    assert result.exit_code == code, result.output
    assert message in " ".join(result.output.split()), result.output
    assert "Traceback" not in result.output


@pytest.fixture
def grid(tmp_path, monkeypatch):
    """(a good grid spec, a spec whose [params] name a task the grid does not have)."""
    monkeypatch.chdir(tmp_path)
    good = write_spec(tmp_path, "pair", ["throw_away_trash", "collect_toys"])
    bad = write_spec(tmp_path, "bad", ["no_such_task"])
    return good, bad


# --- checked before anything is created ----------------------------------------------------

NEW_STORE_REFUSALS = [
    (["{bad}"], "unknown tasks ['no_such_task']"),
    (["no-such-spec"], "no spec named 'no-such-spec'"),
    (["{good}", "--train", "{bad}"], "unknown tasks ['no_such_task']"),
    (["{good}", "--llm", "bogus"], "Unknown LLM 'bogus'"),
    (["{good}", "--llm", "local:/nowhere/model.gguf"], "No model file at /nowhere/model.gguf"),
    (["{good}", "--llm", "openai:"], "Name the model: --llm openai:MODEL"),
    (["{good}", "--mode", "psychic"], "psychic"),
    (["{good}", "--ask", "sometimes"], "--ask 'sometimes' is not a policy"),
    (["{good}", "--asker", "mine"], "--asker names a learned policy: give it with --ask learned"),
    (["{good}", "--include", "earlier"], "--include names a run of an existing store"),
    (["{good}", "--round0-from", "earlier"], "--round0-from names a run of an existing store"),
    (["{good}", "--ask", "learned"], "--ask learned needs a trained policy of an existing store"),
    (["{good}", "--sources", "search,person"], "no person answers in `prag run`"),
    (["{good}", "--sources", "search,oracle"], "name some of experience, search, progress, llm, person"),
    (["{good}", "--places", "rules,oracle"], "oracle is no source of where things are; name some of memory, llm, rules"),
]


@pytest.mark.parametrize(("args", "message"), NEW_STORE_REFUSALS, ids=[" ".join(a) for a, _ in NEW_STORE_REFUSALS])
def test_a_run_that_cannot_be_played_creates_no_store(grid, tmp_path, args, message):
    good, bad = grid
    db = tmp_path / "new.db"
    result = invoke("run", *(a.format(good=good, bad=bad) for a in args), "--store", db, "--llm-retries", 0)
    refused(result, message)
    assert not db.exists() and not (tmp_path / "runs").exists()


EXISTING_STORE_REFUSALS = [
    (["{bad}"], "unknown tasks ['no_such_task']"),
    (["{good}", "--include", "nope"], "no run 'nope' in"),
    (["{good}", "--round0-from", "nope"], "no run 'nope' in"),
    (["{good}", "--ask", "learned"], "no ask policy 'asker'"),
    (["{good}", "--ask", "learned", "--asker", "asker:x"], "--asker 'asker:x': give NAME or NAME:VERSION"),
    (["{good}", "--name", "first"], "a run named 'first' is already in"),
]


@pytest.mark.parametrize(("args", "message"), EXISTING_STORE_REFUSALS, ids=[" ".join(a) for a, _ in EXISTING_STORE_REFUSALS])
def test_a_run_that_cannot_be_played_writes_no_run_row(grid, tmp_path, args, message):
    good, bad = grid
    db = tmp_path / "s.db"
    with Store(db) as store:
        store.add_run(run("first"))
    before = db.read_bytes()
    result = invoke("run", *(a.format(good=good, bad=bad) for a in args), "--store", db)
    refused(result, message)
    with Store(db) as store:
        assert [r.id for r in store.runs()] == ["first"]
    assert db.read_bytes() == before


def test_a_console_that_cannot_be_played_creates_no_store(grid, tmp_path):
    good, bad = grid
    db = tmp_path / "new.db"
    refused(invoke("console", bad, "--store", db), "unknown tasks ['no_such_task']")
    refused(invoke("console", good, "--task", 7, "--store", db), "has 2 tasks: give --task from 0 to 1")
    refused(invoke("console", good, "--llm", "bogus", "--store", db), "Unknown LLM 'bogus'")
    refused(invoke("console", good, "--improver", "bogus", "--store", db), "Unknown LLM 'bogus'")
    assert not db.exists()


def test_resuming_a_run_whose_spec_is_gone_is_refused_before_it_is_claimed(grid, tmp_path):
    good, _ = grid
    db = tmp_path / "s.db"
    with Store(db) as store:
        store.add_run(dataclasses.replace(run("old"), status="interrupted",
                                          config={"version": 2, "prag": "0.1.0", "experiment": {"spec": str(tmp_path / "gone.toml")}}))
    refused(invoke("run", "--resume", "old", "--store", db), "no spec file at")
    with Store(db) as store:
        assert store.run("old").status == "interrupted" and store.run_claims() == {"old": None}


# --- negative and zero values --------------------------------------------------------------

NEGATIVE = [
    ("run", ["{good}", "--limit", "-1"], "--limit"),
    ("run", ["{good}", "--max-steps", "-1"], "--max-steps"),
    ("run", ["{good}", "--max-steps", "0"], "--max-steps"),
    ("run", ["{good}", "--rounds", "0"], "--rounds"),
    ("run", ["{good}", "--k", "-1"], "--k"),
    ("run", ["{good}", "--workers", "0"], "--workers"),
    ("run", ["{good}", "--corrections-k", "-2"], "--corrections-k"),
    ("run", ["{good}", "--llm-timeout", "0"], "--llm-timeout"),
    ("run", ["{good}", "--llm-retries", "-1"], "--llm-retries"),
    ("run", ["{good}", "--ask-p", "1.5"], "--ask-p"),
    ("console", ["{good}", "--task", "-1"], "--task"),
    ("console", ["{good}", "--max-steps", "0"], "--max-steps"),
    ("console", ["{good}", "--k", "-3"], "--k"),
    ("console", ["{good}", "--llm-timeout", "-5"], "--llm-timeout"),
    ("envs", ["play", "{good}", "--task", "-1"], "--task"),
    ("query", ["{db}", "goal", "--k", "0"], "--k"),
    ("query", ["{db}", "goal", "--run", "r1", "--round", "-1"], "--round"),
    ("correct", ["{db}", "1", "--attempts", "0"], "--attempts"),
    ("correct", ["{db}", "1", "--llm-retries", "-1"], "--llm-retries"),
    ("train-asker", ["{db}", "{good}", "--timesteps", "1"], "--timesteps"),
    ("train-asker", ["{db}", "{good}", "--limit", "0"], "--limit"),
    ("train-asker", ["{db}", "{good}", "--gamma", "2"], "--gamma"),
    ("train-asker", ["{db}", "{good}", "--llm-timeout", "0"], "--llm-timeout"),
]


@pytest.mark.parametrize(("command", "args", "option"), NEGATIVE, ids=[f"{c} {' '.join(a)}" for c, a, _ in NEGATIVE])
def test_negative_and_zero_values_are_refused_by_every_command(grid, tmp_path, command, args, option):
    good, _ = grid
    db = tmp_path / "s.db"
    store = ["--store", db] if command in {"run", "console"} else []
    result = invoke(command, *(a.format(good=good, db=db) for a in args), *store)
    assert result.exit_code == 2, result.output
    assert f"Invalid value for '{option}'" in result.output
    assert not db.exists()


# --- user text is not markup ---------------------------------------------------------------


def test_paths_and_messages_keep_their_square_brackets(tmp_path):
    folder = tmp_path / "[x]"
    folder.mkdir()
    missing = folder / "[bold]s[/].db"
    refused(invoke("stats", missing), f"no store at {missing}")
    spec = folder / "flat.toml"
    spec.write_text('env = "grid"\nmax_steps = 5\nparams = 3\n')
    refused(invoke("run", spec, "--store", folder / "new.db"), f"{spec}: [params] must be a table")
    assert not (folder / "new.db").exists()


def test_run_ids_and_paths_with_brackets_show_in_tables(tmp_path):
    folder = tmp_path / "[x]"
    folder.mkdir()
    db = folder / "s.db"
    with Store(db) as store:
        store.add_run(run("[red]r[bold]", rounds=1))
        store.add_episode(episode("[red]r[bold]", 0, "t0", task_type="[heat]"))
    stats, compare = invoke("stats", db), invoke("compare", db)
    assert stats.exit_code == 0 and compare.exit_code == 0, stats.output + compare.output
    assert "[red]r[bold]" in stats.output and f"runs in {db}" in " ".join(stats.output.split())
    assert "[red]r[bold]" in compare.output and "[heat]" in compare.output


# --- prag query: runs and rounds that do not exist ------------------------------------------


@pytest.fixture(scope="module")
def two_rounds(tmp_path_factory):
    """A store with run r1 (rounds 0 and 1 of 3 played) and run r2 (nothing played), with vectors."""
    path = tmp_path_factory.mktemp("query") / "q.db"
    with Store(path) as store:
        store.add_run(run("r1", rounds=3))
        store.add_run(RunRecord(id="r2", spec="test", llm="none", mode="prag", k=3, rounds=2))
        cache = EmbeddingCache(store, minilm())
        for round_ in (0, 1):
            record = episode("r1", round_, "t0", goal="put a clean apple in the fridge")
            cache.vectors([record.goal] + [s.scene for s in record.steps])
            store.add_episode(record)
    return path


def test_query_with_an_unknown_run_names_the_runs(two_rounds):
    refused(invoke("query", two_rounds, "put an apple in the fridge", "--run", "r9"), "no run 'r9' in")
    refused(invoke("query", two_rounds, "put an apple in the fridge", "--run", "r9"), "(runs: r1, r2)")


def test_query_with_a_round_the_run_does_not_have_names_its_rounds(two_rounds):
    result = invoke("query", two_rounds, "put an apple in the fridge", "--run", "r1", "--round", "7")
    refused(result, "run r1 has no round 7: it plays rounds 0 to 2 (played: 0, 1); give --round from 0 to 3")
    refused(invoke("query", two_rounds, "apple", "--round", "1"), "--round N asks what round N of a run could see")


def test_query_says_when_a_round_sees_nothing_and_sees_all_the_run_played_by_default(two_rounds):
    result = invoke("query", two_rounds, "put an apple in the fridge", "--run", "r1", "--round", "0")
    assert result.exit_code == 0, result.output
    assert "no episodes that round 0 of run r1 sees (its rounds < 0)" in " ".join(result.output.split())
    seen = invoke("query", two_rounds, "put an apple in the fridge", "--run", "r1", "--round", "1", "--json")
    assert [hit["round"] for hit in json.loads(seen.output)] == [0]
    everything = invoke("query", two_rounds, "put an apple in the fridge", "--run", "r1", "--json")
    assert sorted(hit["round"] for hit in json.loads(everything.output)) == [0, 1]
    none = invoke("query", two_rounds, "put an apple in the fridge", "--run", "r2")
    assert none.exit_code == 0 and "no episodes that round 2 of run r2 sees" in " ".join(none.output.split())
