"""The source chain: each step a plan from experience, then search (find-X, then means-ends),
then the LLM, then a person; which source chose each step is recorded, and counted per round;
the names of both kinds of source come from one registry (prag.sources).
Played on generated games on the real ALFWorld engine; the LLM is a scripted stand-in and the
person a scripted one, each named as what it is."""
from __future__ import annotations

from pathlib import Path

import pytest
from support import play_until_won

from prag.agent.agent import PragAgent, parse_sources
from prag.agent.config import AgentConfig
from prag.cli.reference import root
from prag.envs.alfworld.env import AlfworldEnv
from prag.envs.alfworld.gen import DIFFICULTIES, generate_game
from prag.envs.base import Environment, Observation, Task
from prag.envs.domain import ALFWORLD
from prag.errors import PragError
from prag.llm.scripted import ScriptedLLM
from prag.retrieval.index import Visibility
from prag.run.config import ExperimentConfig, RunConfig
from prag.run.metrics import round_metrics, steps_by_source
from prag.run.report import Comparison, sources_table
from prag.sources import KNOWLEDGE, STEP_SOURCES, KnowledgeSource, StepSource
from prag.store.episode_extra import Choice, EpisodeExtra
from prag.store.outcomes import Outcome
from prag.store.records import EpisodeRecord, RunRecord

SEARCH = ("experience", "search", "llm")


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated medium ALFWorld game (8 to 12 receptacles) whose object must be found and cooled."""
    return generate_game("pick_cool_then_place_in_recep", 3, tmp_path_factory.mktemp("games"), DIFFICULTIES["medium"])


def alfworld(game: Path) -> AlfworldEnv:
    return AlfworldEnv(Task("cool", "pick_cool_then_place_in_recep", 0, str(game)), game)


def play(env: Environment, agent: PragAgent, limit: int = 40) -> tuple[bool, list[list[object]]]:
    """One episode; whether it was won, and the agent's decisions (each naming a registered step source)."""
    won = play_until_won(env, agent, limit)
    decisions = agent.finish().report.decisions
    assert all(d.source in set(StepSource) for d in decisions)
    return won, decisions


def oracle_plan(game: Path) -> list[str]:
    """The planner's plan of the game (for the stand-ins only; the agent never sees it)."""
    env = alfworld(game)
    try:
        env.reset()
        return env.oracle_plan()
    finally:
        env.close()


def oracle_llm(game: Path) -> ScriptedLLM:
    """A stand-in LLM answering the planner's plan, one step per call."""
    plan = iter(oracle_plan(game))
    return ScriptedLLM(lambda messages: next(plan, "look"))


class ScriptedPerson:
    """A stand-in person who instructs the planner's plan, step by step, and says yes to all."""

    def __init__(self, plan: list[str]) -> None:
        self.plan = iter(plan)
        self.asked = 0

    def confirm(self, action: str, observation: Observation) -> bool | str:
        return True

    def confirm_reading(self, instruction: str, sentence: str | None) -> bool | str:
        return True

    def instruct(self, observation: Observation) -> str | None:
        self.asked += 1
        return next(self.plan, None)


def test_the_default_sources_are_experience_and_the_llm_and_lists_are_checked():
    assert AgentConfig().sources == ("experience", "llm")
    assert parse_sources(" experience, search ,llm,search") == SEARCH
    for bad in ("experience,search", "llm,magic", ""):
        with pytest.raises(PragError, match="--sources"):
            parse_sources(bad)
    with pytest.raises(PragError, match="--sources"):
        RunConfig(ExperimentConfig("x"), agent=AgentConfig(sources=("search",))).check()


def test_search_finds_the_object_then_plans_to_the_goal_without_the_llm(game):
    llm = ScriptedLLM([])  # any call would fail
    agent = PragAgent(llm, None, Visibility(), AgentConfig(ask="hard-coded", sources=SEARCH), domain=ALFWORLD)
    won, decisions = play(alfworld(game), agent)
    assert won and llm.calls == []
    chosen = [d.source for d in decisions]
    first_search = chosen.index("search")
    # find-X until the object is seen, then means-ends to the end: never asked.
    assert chosen[:first_search] == ["find"] * first_search and first_search > 0
    assert set(chosen[first_search:]) == {"search"}
    assert all(not d.asked for d in decisions)


def test_the_default_chain_asks_the_llm_as_before(game):
    agent = PragAgent(oracle_llm(game), None, Visibility(), AgentConfig(ask="hard-coded"), domain=ALFWORLD)
    won, decisions = play(alfworld(game), agent)
    assert won and {d.source for d in decisions} == {"llm"}


def test_under_ask_always_search_changes_nothing_the_llm_sees(game):
    prompts = []
    for sources in (("experience", "llm"), SEARCH):
        llm = oracle_llm(game)
        agent = PragAgent(llm, None, Visibility(), AgentConfig(sources=sources), domain=ALFWORLD)
        won, decisions = play(alfworld(game), agent)
        assert won and {d.source for d in decisions} == {"llm"}
        prompts.append([call["messages"] for call in llm.calls])
    assert prompts[0] == prompts[1]


@pytest.mark.parametrize("sources", [("person",), ("search", "person")])
def test_without_the_llm_the_person_is_asked_for_the_steps_no_earlier_source_gives(game, sources):
    plan = oracle_plan(game)
    person = ScriptedPerson(plan)
    config = AgentConfig(ask="hard-coded", sources=sources)
    agent = PragAgent(ScriptedLLM([]), None, Visibility(), config, domain=ALFWORLD, person=person)
    won, decisions = play(alfworld(game), agent)
    chosen = {d.source for d in decisions}
    assert won
    if "search" in sources:  # search wins this game alone: the person is never asked
        assert person.asked == 0 and chosen == {"find", "search"}
    else:
        assert person.asked == len(plan) and chosen == {"person"}


def test_steps_are_counted_by_the_source_that_chose_them():
    def episode(decisions: list[Choice] | None, n: int, round_: int = 0) -> EpisodeRecord:
        extra = EpisodeExtra(decisions=decisions) if decisions is not None else EpisodeExtra()
        return EpisodeRecord(run_id="r", round=round_, task_id="t", task_type="x", goal="g", won=True, steps=[],
                             n_actions=n, extra=extra)

    mixed = episode([Choice("find", False, False)] * 3 + [Choice("search", False, False)] * 2 + [Choice("llm", True, False)], 6)
    old = episode(None, 4)  # stored before decisions were recorded: every action was the LLM's
    assert steps_by_source(map(Outcome.of, [mixed, old])) == {"find": 3, "search": 2, "llm": 5}
    (figures,) = round_metrics(map(Outcome.of, [mixed, old]))
    assert figures.sources == (("llm", 5), ("find", 3), ("search", 2))
    assert figures.to_dict()["steps_by_source"] == {"llm": 5, "find": 3, "search": 2}


# --- the registry of source names ------------------------------------------------------------------


def test_every_step_source_is_described_and_given_by_one_knowledge_source():
    given = [step for knowledge in KNOWLEDGE.values() for step in knowledge.steps]
    assert sorted(given) == sorted(StepSource) and len(given) == len(set(given))
    assert list(STEP_SOURCES) == list(StepSource) and all(STEP_SOURCES.values())
    assert list(KNOWLEDGE) == list(KnowledgeSource) and all(k.description for k in KNOWLEDGE.values())


def test_the_step_source_names_stores_hold_are_kept():
    # Every episode keeps them in `extra.decisions`: a renamed one would count apart from old stores' steps.
    assert [source.value for source in StepSource] == [
        "episode", "correction", "find", "subgoal", "search", "llm", "person", "random", "progress"]


def test_the_cli_names_and_describes_the_registry_s_knowledge_sources():
    assert parse_sources(",".join(KnowledgeSource)) == tuple(KnowledgeSource)
    commands = root().commands
    offered = {name: next(p for p in commands[name].params if "--sources" in p.opts).help for name in ("run", "console")}
    for source in KnowledgeSource:
        assert f"{source} ({KNOWLEDGE[source].description})" in offered["console"]
    # `prag run` has no person to answer: it offers the others.
    assert [s for s in KnowledgeSource if f"{s} ({KNOWLEDGE[s].description})" in offered["run"]] == [
        KnowledgeSource.EXPERIENCE, KnowledgeSource.SEARCH, KnowledgeSource.PROGRESS, KnowledgeSource.LLM]


def test_the_report_shows_steps_by_source_in_the_registry_s_order():
    decisions = [Choice(name, False, False) for name in ("llm", "plan", "search", "subgoal", "correction")]  # "plan": not ours
    played = EpisodeRecord(run_id="r", round=0, task_id="t", task_type="x", goal="g", won=True, steps=[], n_actions=5,
                           extra=EpisodeExtra(decisions=decisions))
    run = RunRecord(id="r", spec="s", llm="random", mode="prag", k=3, rounds=1)
    table = sources_table(Comparison("s.db", [run], round_metrics([Outcome.of(played)]), [], {"r": "finished"}))
    assert [column.header for column in table.columns][2:] == ["correction", "subgoal", "search", "llm", "plan"]
