"""TextWorld objectives read into ordered sub-goals and followed by search, on real generated games
(TextWorld's generators, the Inform7 compiler in the textworld wheel, Jericho)."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from support import fresh_cache
from prag.agent.agent import PragAgent
from prag.agent.config import AgentConfig
from prag.agent.goals.readers import Context, Reading, TemplateReader, read
from prag.agent.goals.subgoals import SubGoals
from prag.envs.base import Observation
from prag.envs.domain import TEXTWORLD
from prag.envs.goals import SUBGOALS
from prag.envs.textworld.env import TextworldEnv, from_params
from prag.envs.textworld.goals import schema, subgoals
from prag.errors import LLMError
from prag.llm.scripted import ScriptedLLM
from prag.retrieval.index import Visibility
from prag.run.episode import play_episode

REPO = Path(__file__).resolve().parents[1]
TREASURE = {"challenge": "tw-treasure_hunter", "level": 15}  # as envs/textworld-treasure.toml
COIN = {"challenge": "tw-coin_collector", "level": 105}  # as envs/textworld-coin.toml
COOKING = {"challenge": "tw-cooking", "recipe": 1, "take": 1, "go": 6, "open": True}


@pytest.fixture(scope="module", autouse=True)
def cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield from fresh_cache(tmp_path_factory)


def game(params: dict, seed: int) -> TextworldEnv:
    tasks = from_params({**params, "seeds": [seed]}, REPO / "envs")
    (task,) = tasks.tasks()
    return tasks.make(task)


def refuse(messages: list) -> str:
    raise LLMError("the LLM was called: the sub-goals should have chosen every step")


def no_llm_agent() -> PragAgent:
    """The agent as `prag run` plays (ask hard-coded; experience, search, llm), its LLM a scripted
    stand-in that fails the test when called."""
    config = AgentConfig(ask="hard-coded", sources=("experience", "search", "llm"))
    return PragAgent(ScriptedLLM(refuse), None, Visibility(), config, domain=TEXTWORLD)


@pytest.mark.parametrize("params, seed", [(TREASURE, 5), (COIN, 1)])  # few games: each is compiled once
def test_a_generated_objective_reads_as_the_route_that_wins_its_game(params: dict, seed: int) -> None:
    env = game(params, seed)
    try:
        objective = env.reset().goal
        goal = schema().read(objective)
        assert goal is not None and goal.task == SUBGOALS
        assert goal.subgoals == env.oracle_plan()  # TextWorld's own winning commands, in order
        assert schema().read(goal.sentence) == goal  # the canonical sentence reads back the same
    finally:
        env.close()


def test_a_cooking_objective_reads_as_the_cookbook_then_the_meal() -> None:
    env = game(COOKING, 1)
    try:
        assert subgoals(env.reset().goal) == ["examine cookbook", "eat meal"]
    finally:
        env.close()


def test_clause_wordings_of_textworlds_grammar() -> None:
    assert subgoals("First off, make an attempt to take a trip east. Then, pick-up the key from the floor of the attic.") \
        == ["go east", "take key"]
    assert subgoals("Make sure that the chest within the attic is opened. Next, place the key into the chest.") \
        == ["open chest", "insert key into chest"]
    assert subgoals("Unlock the wooden door with the old key. Then, put the apple on the table in the kitchen.") \
        == ["unlock wooden door with old key", "put apple on table"]


@pytest.mark.parametrize("params, seed", [(TREASURE, 5), (COIN, 1)])
def test_the_sub_goals_win_a_real_game_with_no_llm_call(params: dict, seed: int) -> None:
    env = game(params, seed)
    try:
        steps, won, trace = play_episode(env, no_llm_agent())
    finally:
        env.close()
    assert won and trace.usage.cost.calls == 0
    assert [s.action for s in steps[1:]] == [g.command for g in trace.report.subgoals]
    assert [g.met_at for g in trace.report.subgoals] == list(range(1, len(steps)))
    assert trace.report.reading.task == SUBGOALS and trace.report.reading.fits


class WithoutStep:
    """The game with one step left out of its objective's words: the agent must find it itself."""

    def __init__(self, env: TextworldEnv, words: str) -> None:
        self.env, self.words = env, words

    def reset(self) -> Observation:
        observation = self.env.reset()
        assert self.words in observation.goal
        return replace(observation, goal=observation.goal.replace(self.words, ""))

    def step(self, action: str) -> Observation:
        return self.env.step(action)


def test_a_move_behind_a_closed_door_opens_the_door_the_room_says_leads_that_way() -> None:
    # Treasure seed 5: west, open the gate, south x3, take the chocolate bar; the objective told
    # without "open the gate", so "go south" is not admissible in the garage until the gate is open.
    env = game(TREASURE, 5)
    try:
        steps, won, trace = play_episode(WithoutStep(env, "And then, open the gate inside the garage."), no_llm_agent())  # type: ignore[arg-type]
    finally:
        env.close()
    assert won and trace.usage.cost.calls == 0
    assert [s.action for s in steps[1:]] == ["go west", "open gate", "go south", "go south", "go south", "take chocolate bar"]
    assert "open gate" not in [g.command for g in trace.report.subgoals]


def seen(text: str, admissible: list[str], location: str = "attic") -> Observation:
    return Observation(goal="", text=text, admissible=admissible, scene_triples=[], scene_text="", location=location)


def test_a_thing_in_a_closed_container_the_command_names_is_opened_first_and_an_open_one_counts_as_met() -> None:
    start = seen("-= Attic =- You see a closed chest.", ["open chest", "go east"])
    goals = SubGoals.start(["take key from chest", "open box"], TEXTWORLD, start)
    assert goals.step(start) == "open chest"
    opened = seen("You open the chest, revealing a key.", ["close chest", "take key from chest", "go east"])
    goals.observe(1, "open chest", opened)
    assert goals.step(opened) == "take key from chest"
    # The box was opened already: its sub-goal shows met as soon as the key is taken.
    goals.observe(2, "take key from chest", seen("You take the key.", ["close box", "drop key"]))
    assert [(g.met_at, g.how) for g in goals.goals] == [(2, "taken"), (2, "seen")] and goals.current is None


def test_a_blocked_step_with_no_plain_way_and_a_step_away_from_the_route_are_left_to_the_llm() -> None:
    start = seen("-= Attic =- There is a closed hatch leading north.", ["open crate", "go east"])
    goals = SubGoals.start(["go south", "take coin"], TEXTWORLD, start)
    assert goals.step(start) is None  # no door leads south: nothing plain readies the move
    goals.observe(1, "go east", seen("-= Hall =-", ["go west", "go south"], "hall"))
    assert goals.step(seen("", ["go west", "go south"], "hall")) is None  # the route's south is the attic's


class Asked:
    name = "asked"

    def __init__(self) -> None:
        self.asked: list[str] = []

    def offer(self, context: Context, so_far: list[Reading]) -> list[Reading]:
        self.asked.append(context.instruction)
        return []


def test_an_objective_the_template_cannot_read_is_left_to_the_later_readers() -> None:
    words = "Find something interesting to do in the house."
    later = Asked()
    assert read([TemplateReader(), later], Context(words, TEXTWORLD, [])) == []
    assert later.asked == [words]
    # The one LLM call is the facts reader's (prag.agent.goals.fact_reader), which reads no facts in it.
    reader = ScriptedLLM(lambda messages: "none" if "Instruction:" in messages[-1]["content"] else refuse(messages))
    agent = PragAgent(reader, None, Visibility(), AgentConfig(ask="hard-coded", sources=("experience", "search", "llm")),
                      domain=TEXTWORLD)
    agent.reset(replace(seen("-= Attic =-", ["go east"]), goal=words))
    assert agent.goal.subgoals is None and agent.goal.sentence == words and agent.finish().report.subgoals == []
    assert len(reader.calls) == 1


COOKBOOK = """You open the copy of "Cooking: A Modern Approach (3rd Ed.)" and start reading:

Recipe #1
---------
Gather all following ingredients and follow the directions to prepare this tasty meal.

Ingredients:
red potato
  yellow bell pepper

Directions:
chop the red potato
  fry the red potato
  roast the yellow bell pepper
  prepare meal
"""


def test_the_recipe_the_cookbook_shows_joins_the_sub_goals_before_the_meal() -> None:
    start = seen("-= Kitchen =-", ["examine cookbook", "take knife from counter"], "kitchen")
    goals = SubGoals.start(["examine cookbook", "eat meal"], TEXTWORLD, start, schema().revealed)
    goals.observe(1, "examine cookbook", seen(COOKBOOK, ["take red potato from counter"], "kitchen"))
    assert [g.command for g in goals.goals] == [
        "examine cookbook", "take red potato", "take yellow bell pepper", "chop red potato with knife",
        "cook red potato with stove", "cook yellow bell pepper with oven", "prepare meal", "eat meal",
    ]
    goals.observe(2, "take red potato from counter", seen("You take the red potato.", ["drop red potato"], "kitchen"))
    held = seen("You take the yellow bell pepper.", ["drop yellow bell pepper", "take knife from counter"], "kitchen")
    goals.observe(3, "take yellow bell pepper from fridge", held)  # taken elsewhere, by another source
    assert goals.step(held) == "take knife from counter"  # the chop names the knife: take it first
    goals.observe(4, "examine cookbook", seen(COOKBOOK, [], "kitchen"))
    assert len(goals.goals) == 8  # read again, the recipe adds nothing new
