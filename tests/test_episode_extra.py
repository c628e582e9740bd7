"""An episode's `extra` is declared (prag.store.episode_extra): the store reads it back against
the declared fields, so a key renamed on one side is an error, not silently dropped data; and
episodes stored by older prag, with fewer fields and positional decisions, still read."""
from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import get_type_hints

import pytest
from support import placed_episode, run

from prag.envs.spec import load_spec
from prag.errors import DamagedStore
from prag.run.metrics import steps_by_source
from prag.run.runner import asked_every_step
from prag.store import Store
from prag.store.episode_extra import Choice, Effort, EpisodeExtra, ExtraFigures, GoalReading, Hypothesis
from prag.store.outcomes import Outcome

# An agent episode as prag wrote it before the fields were declared (decisions by position).
OLD = {
    "spec": "alfworld-mini", "env": "alfworld", "retrieved": [], "thoughts": [], "invalid_actions": 0,
    "banned_actions": 0, "corrections": [], "utterances": [[1, "now open it"]],
    "decisions": [["find", False, False], ["llm", True, True]],
    "effort": {"instructions": 1, "words": 3, "answers": 0},
    "reading": {"instruction": "Chill an apple.", "sentence": "put a cool apple in fridge", "source": "llm",
                "confidence": 0.6, "task": "pick_cool_then_place_in_recep", "slots": {"obj": "apple", "recep": "fridge"},
                "why": "", "fits": True,
                "hypotheses": [{"sentence": "put a cool apple in fridge", "source": "llm", "confidence": 0.6,
                                "task": "pick_cool_then_place_in_recep", "slots": {"obj": "apple", "recep": "fridge"},
                                "why": "", "dropped": None}]},
    "subgoals": [], "steps_past_llm_budget": 0,
}


def stored(tmp_path: Path, extra: dict) -> Path:
    """A store with one episode whose extra column holds `extra` as written."""
    path = tmp_path / "s.db"
    with Store(path) as store:
        store.add_run(run())
        episode_id = store.add_episode(placed_episode([[("apple 1", "in", "fridge 1")]]))
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("update episodes set extra = ? where id = ?", [json.dumps(extra), episode_id])
    return path


def test_an_episode_stored_by_older_prag_reads_with_its_decisions_named(tmp_path):
    with Store(stored(tmp_path, OLD)) as store:
        (episode,) = store.episodes("r1")
        outcomes = store.outcomes(["r1"])  # what `prag compare` reads of it, without reading it whole
    extra = episode.extra
    assert extra.decisions == [Choice("find", False, False), Choice("llm", True, True)]
    assert extra.utterances == [(1, "now open it")] and extra.effort == Effort(1, 3, 0)
    assert extra.reading == GoalReading(
        "Chill an apple.", "put a cool apple in fridge", "llm", 0.6, "pick_cool_then_place_in_recep",
        {"obj": "apple", "recep": "fridge"}, hypotheses=[Hypothesis(
            "put a cool apple in fridge", "llm", 0.6, "pick_cool_then_place_in_recep", {"obj": "apple", "recep": "fridge"})])
    assert episode.read_as == "put a cool apple in fridge"
    assert steps_by_source([Outcome.of(episode)]) == {"find": 1, "llm": 1} and not asked_every_step(episode)
    assert outcomes == [Outcome.of(episode)]


def test_the_figures_read_the_fields_of_an_extra_as_declared_and_of_each_decision_its_source():
    """`prag compare` reads a few fields of each extra (ExtraFigures): declared as EpisodeExtra
    declares them, so the two readers cannot drift apart."""
    figures, extra = get_type_hints(ExtraFigures), get_type_hints(EpisodeExtra)
    assert {name: figures[name] for name in figures if name != "decisions"} == {
        name: extra[name] for name in figures if name != "decisions"}
    assert figures["decisions"] == dict[get_type_hints(Choice)["source"], int]  # steps by source


def test_an_episode_from_before_anything_was_reported_reads_as_reporting_nothing(tmp_path):
    with Store(stored(tmp_path, {"spec": "alfworld-mini"})) as store:
        (episode,) = store.episodes("r1")
    assert episode.extra.spec == "alfworld-mini" and episode.extra.env is None
    assert episode.extra.decisions == [] and episode.extra.reading is None and episode.extra.effort == Effort()


@pytest.mark.parametrize("extra, names", [
    ({**OLD, "decision": OLD["decisions"]}, "decision"),  # a key renamed by its writer
    ({**OLD, "effort": {"instructions": 1, "wordz": 3}}, "effort.wordz"),
    ({**OLD, "decisions": [{"source": "llm", "asked": True}]}, "decisions.0.same_plan"),  # a key missing
    ({**OLD, "reading": {"sentence": "put a cool apple in fridge"}}, "reading.instruction"),
    ({**OLD, "steps_past_llm_budget": "many"}, "steps_past_llm_budget"),
])
def test_a_key_not_declared_or_missing_is_a_damaged_store_naming_it(tmp_path, extra, names):
    with Store(stored(tmp_path, extra)) as store, pytest.raises(DamagedStore, match=rf"episodes\.extra\.{names} of episode 1 is "):
        list(store.episodes("r1"))


def test_what_is_stored_reads_back_as_it_was_written(tmp_path):
    with Store(stored(tmp_path, OLD)) as store:
        (episode,) = store.episodes("r1")
        store.add_run(run("r2"))
        store.add_episode(placed_episode([[("apple 1", "in", "fridge 1")]], run_id="r2", extra=episode.extra))
        (again,) = store.episodes("r2")
    assert again.extra == episode.extra


def test_the_step_cap_and_the_goal_sentence_are_declared_by_the_environment_protocol():
    source = load_spec("grid-household").open(max_steps=7)
    env = source.make(source.tasks()[0])
    try:
        first = env.reset()
        assert first.max_steps == 7 and "max_steps" not in first.infos
        assert env.goal_sentence is None  # the grid's goals are told in its own words
        assert env.step(first.admissible[0]).max_steps == 7
    finally:
        env.close()
