"""The LLM answer cache in the store: greedy answers served without the model, keyed by
(model, prompt, decoding settings), counted in `prag stats`; the migration that adds its tables.

The model is a scripted stand-in (the cache's logic is under test, not a model); the store is a
real SQLite file, the runner plays the real grid world.
"""
from __future__ import annotations

import json
import threading

import pytest
from support import episode, minilm, run
from typer.testing import CliRunner

from prag.cli import _register, app
from prag.llm.scripted import ScriptedLLM
from prag.run.config import ExperimentConfig, RetrievalConfig, RunConfig
from prag.run.runner import Runner, start_run
from prag.store import Store
from prag.store.answers import MAX_ANSWER_CHARS, cached
from prag.store.schema import MIGRATIONS

PROMPT = [
    {"role": "system", "content": "Reply with one admissible action."},
    {"role": "user", "content": "Your goal: put a clean apple in the fridge\nAdmissible actions: go to fridge 1"},
]


def numbered_answers() -> ScriptedLLM:
    """Stand-in whose n-th call answers "answer n": a served answer shows which call made it."""
    counter = iter(range(1, 10_000))
    return ScriptedLLM(lambda messages: f"answer {next(counter)}")


def test_a_hit_never_calls_the_model_and_costs_nothing(tmp_path):
    model = numbered_answers()
    with Store(tmp_path / "s.db") as store:
        first = cached(model, store).complete(PROMPT, max_tokens=16)
    # A fresh store object and wrapper: the answer was kept in the file, not in memory.
    with Store(tmp_path / "s.db") as store:
        again = cached(model, store).complete(PROMPT, max_tokens=16)
        stats = store.answers.stats()
    assert len(model.calls) == 1
    assert again.text == first.text == "answer 1"
    assert (again.cost.prompt_tokens, again.cost.completion_tokens) == (first.cost.prompt_tokens, first.cost.completion_tokens)
    assert again.cost.cached_tokens == again.cost.prompt_tokens and again.cost.seconds == 0
    assert stats == {"scripted": {"rows": 1, "hits": 1, "misses": 1, "saved_seconds": 0.0}}


@pytest.mark.parametrize(
    "change",
    [
        {"max_tokens": 17},
        {"stop": ["\n"]},
        {"choices": ["go to fridge 1", "open fridge 1"]},
        {"choices": ["open fridge 1", "go to fridge 1"]},  # the same set in another order
        {"messages": [PROMPT[0], {"role": "user", "content": PROMPT[1]["content"] + " "}]},
        {"messages": [{"role": "user", "content": PROMPT[0]["content"]}, PROMPT[1]]},
    ],
    ids=["max_tokens", "stop", "choices", "choices-order", "message-text", "message-role"],
)
def test_a_different_decoding_setting_or_prompt_is_a_miss(tmp_path, change):
    model = numbered_answers()
    base = {"messages": PROMPT, "max_tokens": 16, "stop": None, "choices": ["go to fridge 1", "open fridge 1"]}
    if "choices" in change:
        base["choices"] = None
    with Store(tmp_path / "s.db") as store:
        llm = cached(model, store)
        assert llm.complete(**base).text == "answer 1"
        assert llm.complete(**(base | change)).text == "answer 2"
        assert llm.complete(**(base | change)).text == "answer 2"  # and then a hit
        assert store.answers.stats()["scripted"] == {"rows": 2, "hits": 1, "misses": 2, "saved_seconds": 0.0}


def test_another_model_misses(tmp_path):
    with Store(tmp_path / "s.db") as store:
        small, large = numbered_answers(), numbered_answers()
        large.name = "large"
        cached(small, store).complete(PROMPT)
        assert cached(large, store).complete(PROMPT).text == "answer 1"
        assert len(large.calls) == 1


def test_the_seed_does_not_matter_to_a_greedy_answer(tmp_path):
    # Greedy decoding never reads the seed: runs with another --seed share the answers.
    model = numbered_answers()
    with Store(tmp_path / "s.db") as store:
        llm = cached(model, store)
        llm.complete(PROMPT, seed=0)
        assert llm.complete(PROMPT, seed=7).text == "answer 1"
    assert len(model.calls) == 1


def test_sampled_calls_always_run_the_model_and_are_not_kept(tmp_path):
    model = numbered_answers()
    with Store(tmp_path / "s.db") as store:
        llm = cached(model, store)
        texts = [llm.complete(PROMPT, temperature=0.7, seed=1).text for _ in range(2)]
        assert texts == ["answer 1", "answer 2"]
        assert llm.complete(PROMPT).text == "answer 3"  # nothing sampled was kept for greedy either
        assert store.answers.stats()["scripted"]["rows"] == 1


def test_an_answer_too_long_to_keep_is_returned_but_not_stored(tmp_path):
    long = "go to fridge 1 " * (MAX_ANSWER_CHARS // 10)
    model = ScriptedLLM([long, long])
    with Store(tmp_path / "s.db") as store:
        llm = cached(model, store)
        assert llm.complete(PROMPT).text == long
        assert llm.complete(PROMPT).text == long
        assert len(model.calls) == 2
        assert store.answers.stats()["scripted"] == {"rows": 0, "hits": 0, "misses": 2, "saved_seconds": 0.0}


def test_parallel_threads_share_the_cache_safely(tmp_path):
    prompts = [[{"role": "user", "content": f"prompt {n}"}] for n in range(8)]
    model = ScriptedLLM(lambda messages: "re: " + messages[-1]["content"])
    errors: list[BaseException] = []
    with Store(tmp_path / "s.db") as store:
        llm = cached(model, store)

        def play() -> None:
            try:
                for _ in range(3):
                    for prompt in prompts:
                        assert llm.complete(prompt).text == "re: " + prompt[0]["content"]
            except BaseException as exc:  # noqa: BLE001 - handed to the main thread
                errors.append(exc)

        threads = [threading.Thread(target=play) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        stats = store.answers.stats()["scripted"]
    assert not errors
    assert stats["rows"] == len(prompts)
    # Every call was served or ran the model, which ran for misses only; a thread can miss a
    # prompt only on its first pass (another thread may be asking the model for it at that time).
    assert stats["hits"] + stats["misses"] == 4 * 3 * len(prompts)
    assert len(prompts) <= stats["misses"] == len(model.calls) <= 4 * len(prompts)


def first_action(messages) -> str:
    """Stand-in policy: the first admissible action listed in the prompt (folded `verb: a, b`)."""
    listed = messages[-1]["content"].split("Admissible actions: ")[1].split("\n")[0]
    verb, _, rests = listed.split("; ")[0].partition(": ")
    return f"{verb} {rests.split(', ')[0]}" if rests else verb


def test_a_rerun_of_an_identical_round_is_served_from_the_cache(tmp_path):
    spec = tmp_path / "tiny.toml"
    spec.write_text('name = "tiny"\nenv = "grid"\nmax_steps = 6\n[params]\n'
                    'tasks = ["throw_away_trash", "collect_toys"]\nper_task = 1\nseed = 0\n')
    config = RunConfig(ExperimentConfig(spec=str(spec), rounds=1), RetrievalConfig(mode="prag", k=2))
    model = ScriptedLLM(first_action)
    played = []
    with Store(tmp_path / "s.db") as store:
        for name in ("first", "again"):
            record = start_run(store, config, name)
            Runner(store, record, config, llm=model, encoder=minilm()).play()  # the runner caches by default
            played.append([[s.action for s in e.steps] for e in store.episodes(record.id)])
        stats = store.answers.stats()["scripted"]
    first_run_calls = stats["misses"]
    assert len(model.calls) == first_run_calls > 0  # the second run never asked the stand-in
    assert stats["hits"] == first_run_calls
    assert played[0] == played[1]


def test_prag_stats_counts_answer_cache_hits(tmp_path):
    path = tmp_path / "s.db"
    with Store(path) as store:
        llm = cached(numbered_answers(), store)
        for _ in range(3):
            llm.complete(PROMPT)
    _register()
    figures = CliRunner().invoke(app, ["stats", str(path), "--json"])
    table = CliRunner().invoke(app, ["stats", str(path)], env={"COLUMNS": "200"})
    assert figures.exit_code == 0 and table.exit_code == 0, figures.output + table.output
    assert json.loads(figures.output)["answers"]["scripted"] == {
        "rows": 1, "hits": 2, "misses": 1, "saved_seconds": 0.0
    }
    assert "LLM answers (scripted)" in table.output and "1 stored, 2 cache hits, 1 misses" in table.output


def test_a_store_from_before_the_cache_gains_its_tables_and_keeps_its_episodes(tmp_path, monkeypatch):
    path = tmp_path / "old.db"
    before = [m for m in MIGRATIONS if m[0] < 5]
    with monkeypatch.context() as old_prag:
        old_prag.setattr("prag.store.database.MIGRATIONS", before)
        old_prag.setattr("prag.store.database.SCHEMA_VERSION", before[-1][0])
        with Store(path) as store:
            store.add_run(run("old"))
            store.add_episode(episode("old"))
            assert "answers" not in store.db.table_names()
    with Store(path) as store:
        assert {"answers", "answer_counts"} <= set(store.db.table_names())
        assert [m["version"] for m in store.migrations()] == [m[0] for m in MIGRATIONS]
        assert [e.goal for e in store.episodes("old")] == [episode("old").goal]
        model = numbered_answers()
        for _ in range(2):
            cached(model, store).complete(PROMPT)
        assert len(model.calls) == 1
