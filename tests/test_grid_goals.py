"""The grid's goal schema: every task's own sentence read to its formal goal and back, people's
words (articles, plurals, other names of kinds and furniture) read to the canonical sentence the
family's `needs` and action model read, words naming what no grid task moves read as nothing,
the LLM reader's grammar of lists, and a verified reading reused with no LLM call."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from support import minilm

from prag.agent.agent import PragAgent
from prag.agent.config import AgentConfig
from prag.agent.goals.readers import Context, ExperienceReader, LLMReader, Readings, TemplateReader, read
from prag.agent.protocol import Usage
from prag.envs.base import Task
from prag.envs.domain import GRID
from prag.envs.grid import TASKS, GridEnv
from prag.envs.grid.goals import schema
from prag.envs.grid.model import read_goal
from prag.llm.scripted import ScriptedLLM
from prag.retrieval.embed import EmbeddingCache
from prag.retrieval.index import Visibility
from prag.retrieval.readings import ReadingMemory
from prag.store import Store
from prag.store.episode_extra import EpisodeExtra, GoalReading
from prag.store.records import EpisodeRecord, RunRecord, StepRecord

SEEDS = range(12)


def own_goals() -> list[tuple[str, str]]:
    """(task, goal sentence) of every grid task over a few seeds, as the tasks write them."""
    goals = []
    for name, cls in TASKS.items():
        for seed in SEEDS:
            world = cls()
            world.reset(seed=seed)
            goals.append((name, world.goal_text()))
    return sorted(set(goals))


@pytest.mark.parametrize("task, words", own_goals())
def test_a_tasks_own_goal_is_read_by_the_template_to_its_formal_goal_and_back(task, words):
    (reading,) = read([TemplateReader()], Context(words, GRID, []))
    assert (reading.sentence, reading.source, reading.goal.task) == (words, "template", task)
    canonical = reading.goal.sentence
    assert canonical == words.lower().rstrip(".")
    assert schema().read(canonical) == reading.goal
    assert schema().sentence(task, dict(reading.goal.slots)) == canonical
    assert GRID.needs(canonical) == GRID.needs(words) != {}
    assert read_goal(canonical) == read_goal(words) is not None


def test_every_task_is_read_and_a_list_holds_each_of_its_tasks_kinds():
    assert {task for task, _ in own_goals()} == set(TASKS) == set(schema().templates)
    goal = schema().read("Put away the groceries: put the milk, the butter and the eggs in the fridge, then close the fridge.")
    assert goal.slots == (("groceries", "the milk, the butter and the eggs"),)
    assert GRID.needs(goal.sentence) == {"milk": 1, "butter": 1, "eggs": 1, "fridge": 1}


@pytest.mark.parametrize("words, sentence", [
    ("Stick the milk and eggs in the fridge and shut it.",
     "put away the groceries: put the milk and the eggs in the fridge, then close the fridge"),
    ("put the apples, some bread & an egg away in the refrigerator, then close it",  # plurals, articles, "&"
     "put away the groceries: put the apple, the bread and the eggs in the fridge, then close the fridge"),
    ("Throw the soda cans and the banana skin in the trash can.",
     "throw away the trash: put the soda can and the banana peel in the bin, and nothing else"),
    ("toss newspapers in the bin", "throw away the trash: put the newspaper in the bin, and nothing else"),
    ("Put the teddy and the toy cars into the toy box.", "collect the toys: put the teddy bear and the toy car in the box"),
    ("Wash the plates and the mugs and put them in the cupboard.",
     "wash the dishes: clean the plate and the cup at the sink, put them in the cabinet, then turn the sink off"),
    ("Water both plants.", "water all 2 plants with the watering can, filled at the sink, then turn the sink off"),
    ("water the plant with the watering can and turn off the sink",
     "water the plant with the watering can, filled at the sink, then turn the sink off"),
])
def test_peoples_words_read_as_the_canonical_sentence_that_needs_and_the_model_read(words, sentence):
    goal = schema().read(words)
    assert goal is not None and goal.sentence == sentence
    (reading,) = read([TemplateReader()], Context(words, GRID, []))
    assert reading.sentence == sentence  # search, find-X and plans take the canonical sentence, not the words
    assert GRID.needs(reading.sentence) != {} and read_goal(reading.sentence) is not None


@pytest.mark.parametrize("words", [
    "Stick the milk and the lettuce in the fridge and shut it.",  # lettuce: no grid kind
    "put the milk and the book in the fridge and close it",  # a book is no grocery
    "throw the book in the bin",  # nor trash: the trash task keeps it out of the bin
    "put the ball in the fridge and close it",  # a toy is no grocery
    "water the three plants",  # no house has three
    "tidy up the house",
])
def test_words_naming_what_no_grid_task_asks_read_as_nothing(words):
    assert schema().read(words) is None
    assert read([TemplateReader()], Context(words, GRID, [])) == []


def test_the_llm_reads_a_list_under_a_grammar_of_each_tasks_kinds():
    llm = ScriptedLLM(["Put away the groceries: put the milk and eggs in the fridge, then close the fridge"],
                      supports_choices=True)
    (reading,) = read([TemplateReader(), LLMReader(llm, lambda w: [], Usage())],
                      Context("the shopping needs to go in the cold", GRID, ["counter", "fridge"]))
    assert (reading.sentence, reading.source) == (
        "put away the groceries: put the milk and the eggs in the fridge, then close the fridge", "llm")
    grammar = llm.calls[0]["grammar"]
    assert 'groceries ::= groceries-item ((", " groceries-item)* " and " groceries-item)?' in grammar
    groceries = next(line for line in grammar.splitlines() if line.startswith("groceries-item ::="))
    assert '"milk"' in groceries and '"ball"' not in groceries  # each list takes its task's kinds only
    system = llm.calls[0]["messages"][0]["content"]
    assert "{groceries}" in system and "'clean'" not in system  # the grid's rules, not ALFWorld's
    assert "Places in this room" not in llm.calls[0]["messages"][-1]["content"]  # no slot is the room's


def test_the_grammar_of_lists_is_one_llama_cpp_parses():
    llama_cpp = pytest.importorskip("llama_cpp")
    llm = ScriptedLLM([""], supports_choices=True)
    read([LLMReader(llm, lambda w: [], Usage())], Context("tidy up", GRID, []))
    llama_cpp.LlamaGrammar.from_string(llm.calls[0]["grammar"], verbose=False)


@pytest.mark.parametrize("last_action, fits", [
    ("close fridge 1", True),
    ("drop milk 1 in fridge 1", True),
    ("drop milk 1 in box 1", False),  # won as another task than the reading's
])
def test_a_win_bears_a_grid_reading_out_when_it_ends_at_the_tasks_furniture(last_action, fits):
    llm = ScriptedLLM(["put away the groceries: put the milk in the fridge, then close the fridge"])
    readings = Readings([LLMReader(llm, lambda w: [], Usage())], Context("milk into the cold", GRID, []))
    readings.start()
    assert readings.fits(last_action) is fits


@pytest.fixture
def store(tmp_path: Path) -> Store:
    store = Store(tmp_path / "readings.db")
    store.add_run(RunRecord("r", "set", "scripted", "prag", 1, 3))
    return store


def test_a_verified_grid_reading_is_reused_for_the_same_words_with_no_llm_call(store):
    words = "Get the shopping into the fridge, milk and cheese, and shut it."
    sentence = "put away the groceries: put the milk and the cheese in the fridge, then close the fridge"
    store.add_episode(EpisodeRecord(
        run_id="r", round=0, task_id="a", task_type="put_away_groceries", goal=words, won=True,
        steps=[StepRecord(0, None, "", "")],
        extra=EpisodeExtra(reading=GoalReading(words, sentence, "llm", fits=True)),
    ))
    recall = ReadingMemory(store, EmbeddingCache(store, minilm())).recaller(Visibility("r", 1))
    llm = ScriptedLLM([])  # any call fails
    chain = [TemplateReader(), ExperienceReader(recall), LLMReader(llm, recall, Usage())]
    (reading,) = read(chain, Context("get the shopping into the fridge: milk and cheese, and shut it", GRID, []))
    assert (reading.sentence, reading.source, reading.confidence) == (sentence, "experience", 1.0)
    assert reading.goal.slots == (("groceries", "the milk and the cheese"),)
    assert llm.calls == []


def test_a_task_told_in_peoples_words_is_won_by_search_with_no_llm_call():
    env = GridEnv(Task("groceries-0", "put_away_groceries", 0))
    observation = env.reset()
    kinds = [dict(schema().read(observation.goal).slots)["groceries"]]
    words = f"Stick {kinds[0]} in the refrigerator and shut it."
    agent = PragAgent(ScriptedLLM([]), None, Visibility(),
                      AgentConfig(ask="hard-coded", sources=("experience", "search", "llm")), domain=GRID)
    observation = replace(observation, goal=words)
    agent.reset(observation)
    for _ in range(60):
        decision = agent.act(observation)
        observation = replace(env.step(decision.action), goal=words)
        agent.observe(decision.action, observation)
        if observation.won:
            break
    env.close()
    assert observation.won and agent.settings.llm.calls == []
    assert agent.goal.sentence == schema().read(words).sentence
