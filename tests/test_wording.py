"""The spec parameter `goals`: which sentence a real or generated ALFWorld game's goal is given in."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import SHARED_ALFWORLD

from prag.envs.alfworld.env import from_params
from prag.envs.alfworld.goals import schema
from prag.envs.alfworld.wording import PHRASINGS, Wording, instructions
from prag.errors import SpecError
from prag.run.metrics import reading_scores
from prag.store.episode_extra import EpisodeExtra, GoalReading, Hypothesis
from prag.store.outcomes import Outcome
from prag.store.records import EpisodeRecord, StepRecord

COMMANDS = SHARED_ALFWORLD / "refined_valid_seen_commands.json"


def source(alfworld_data: Path, tmp_path: Path, goals=None, **params):
    params = {"split": "valid_seen", "data_dir": str(alfworld_data), "per_type": 1, **params}
    return from_params({**params, **({"goals": goals} if goals is not None else {})}, tmp_path)


def played(src, task):
    """The goal the agent is told, the game's own sentence, and whether the planner's plan still wins."""
    env = src.make(task)
    try:
        told = env.reset().goal
        won = False
        for action in env.oracle_plan():
            won = env.step(action).won
        return told, env.goal_sentence, won
    finally:
        env.close()


def test_turk_gives_one_of_the_games_own_annotations_and_the_game_still_wins_as_before(alfworld_data, tmp_path):
    src = source(alfworld_data, tmp_path, "turk", task_types=["pick_clean_then_place_in_recep"])
    (task,) = src.tasks()
    told, sentence, won = played(src, task)
    traj = json.loads((Path(task.ref).parent / "traj_data.json").read_text())
    annotations = [" ".join(a["task_desc"].split()) for a in traj["turk_annotations"]["anns"]]
    assert told in annotations and told != sentence
    assert schema().read(sentence).task == "pick_clean_then_place_in_recep"
    assert won  # the PDDL goal did not change with the wording
    # The choice is the seed's: the same seed gives the same sentence, the wording's seed another one.
    assert source(alfworld_data, tmp_path, "turk", task_types=["pick_clean_then_place_in_recep"]).make(task).instruction == told
    chosen = {instructions(Wording("turk", seed=s), {task.task_id: Path(task.ref).parent})[task.task_id] for s in range(12)}
    assert chosen == set(annotations)


def test_template_is_the_default_and_tells_the_games_own_sentence(alfworld_data, tmp_path):
    src = source(alfworld_data, tmp_path, task_types=["look_at_obj_in_light"])
    (task,) = src.tasks()
    told, sentence, won = played(src, task)
    assert told == sentence and won


@pytest.mark.skipif(not COMMANDS.is_file(), reason=f"no Revisiting ALFRED commands file at {COMMANDS}")
@pytest.mark.parametrize("field", ["refined", "korean_command"])
def test_a_commands_files_field_words_each_game_by_its_trial(alfworld_data, tmp_path, field):
    src = source(alfworld_data, tmp_path, {"file": str(COMMANDS), "field": field}, num_tasks=3)
    entries = {e["task_id"]: e for e in json.loads(COMMANDS.read_text())}
    for task in src.tasks():
        env = src.make(task)
        assert env.instruction == " ".join(entries[Path(task.ref).parent.name][field].split())


def test_a_commands_file_without_a_game_of_the_split_says_so(alfworld_data, tmp_path):
    partial = tmp_path / "commands.json"
    partial.write_text(json.dumps([{"task_id": "trial_T0", "refined": "Put a mug on the desk."}]))
    with pytest.raises(SpecError, match="has no 'refined' command for the game"):
        source(alfworld_data, tmp_path, {"file": str(partial), "field": "refined"})


@pytest.mark.parametrize("goals, message", [
    ("crowd", "goals must be one of 'template', 'turk', 'people'"),
    ({"file": "x.json", "field": "summary"}, "field one of refined"),
    ({"file": "$NO_SUCH_VARIABLE_HERE", "field": "refined"}, "names an environment variable that is not set"),
])
def test_a_wrong_goals_param_is_an_error_that_says_what_to_give(alfworld_data, tmp_path, goals, message):
    with pytest.raises(SpecError, match=message):
        source(alfworld_data, tmp_path, goals)


def test_people_phrasings_name_the_games_kinds_in_everyday_words_and_read_back_by_the_schema(alfworld_data, tmp_path):
    src = source(alfworld_data, tmp_path, "people")
    for task in src.tasks():
        told = src.make(task).instruction
        traj = json.loads((Path(task.ref).parent / "traj_data.json").read_text())
        shapes = [p.split("{")[0] for p in PHRASINGS[task.task_type]]
        assert any(told.startswith(shape) for shape in shapes), told
        assert "{" not in told and told != schema().sentence(task.task_type, {
            "obj": traj["pddl_params"]["object_target"].lower(), "recep": traj["pddl_params"]["parent_target"].lower(),
            "toggle": traj["pddl_params"]["toggle_target"].lower()})


def test_reading_scores_count_first_and_last_readings_against_the_games_own_goal():
    def episode(first: str, last: str | None = None, sentence: str | None = "put a clean bowl in cabinet.") -> EpisodeRecord:
        def as_stored(text: str, dropped: str | None = None) -> Hypothesis:
            goal = schema().read(text)
            return Hypothesis(text, "llm", 0.6, goal.task, dict(goal.slots), dropped=dropped)
        hypotheses = [as_stored(first, "its plan ran out"), as_stored(last)] if last else [as_stored(first)]
        now = as_stored(last or first)
        reading = GoalReading("words", now.sentence, now.source, now.confidence, now.task, now.slots, hypotheses=hypotheses)
        extra = EpisodeExtra(env="alfworld", reading=reading, goal_sentence=sentence)
        return EpisodeRecord("r", 0, "t", "", "words", True, [StepRecord(0, None, "", "")], extra=extra)

    episodes = [
        episode("put a clean bowl in cabinet"),                                   # right at once
        episode("put a clean bowl in drawer", "put a clean bowl in cabinet"),     # revised to right
        episode("put a bowl in cabinet"),                                         # wrong
        episode("put a bowl in cabinet", sentence=None),                          # told the game's own sentence: not counted
    ]
    assert reading_scores(map(Outcome.of, episodes)) == (3, 1, 2)


def test_the_results_card_names_the_wording_the_spec_chose():
    from types import SimpleNamespace

    from prag.run.card import _goal_wording

    assert _goal_wording(SimpleNamespace(params={}), "alfworld") == "template"
    assert _goal_wording(SimpleNamespace(params={"goals": "turk"}), "alfworld") == "turk"
    commands = {"file": "$HOME/data/refined_valid_seen_commands.json", "field": "korean_command"}
    assert _goal_wording(SimpleNamespace(params={"goals": commands}), "alfworld") == "korean_command of refined_valid_seen_commands.json"
    learned = SimpleNamespace(params={}, goals="learned")
    assert _goal_wording(learned, "alfworld") == "template; the family's goal templates and schema withheld (goals = learned)"
    assert _goal_wording(SimpleNamespace(params={"goals": "turk"}), "sciworld") == "the family's own task text"
