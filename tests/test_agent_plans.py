"""The agent with plans and a mediator, on the real grid engine with a real store and MiniLM:
a stored success of the same task is replayed without the LLM; each ask policy decides as it
should; a plan step that cannot be taken is not forced. The LLM is a scripted stand-in."""
from __future__ import annotations

from pathlib import Path

import pytest
from conftest import plan_follower, plan_transcript, plans_of, write_spec
from support import minilm

from prag.agent.agent import PragAgent
from prag.agent.config import AgentConfig
from prag.agent.plans import Plan
from prag.agent.proposal import Proposal, Standing, View
from prag.agent.sources.mediator import Learned
from prag.envs.base import Environment
from prag.envs.domain import GRID
from prag.envs.spec import load_spec
from prag.llm.scripted import ScriptedLLM
from prag.retrieval.corrections import CorrectionSource, add_correction
from prag.retrieval.embed import EmbeddingCache
from prag.retrieval.episodes import ExperienceSource
from prag.retrieval.index import Visibility
from prag.store import EpisodeRecord, RunRecord, StepRecord, Store
from prag.store.corrections import Correction
from prag.store.episode_extra import Choice


def play(env: Environment, agent: PragAgent) -> tuple[EpisodeRecord, list]:
    """One episode to `done`; the record (round 0 of run "r") and the decisions."""
    observation = env.reset()
    agent.reset(observation)
    steps = [StepRecord.of(0, None, observation)]
    while not observation.done:
        decision = agent.act(observation)
        observation = env.step(decision.action)
        agent.observe(decision.action, observation)
        steps.append(StepRecord.of(len(steps), decision.action, observation))
        if observation.won:
            break
    trace = agent.finish()
    record = EpisodeRecord(run_id="r", round=0, task_id=env.task.task_id, task_type=env.task.task_type,
                           goal=trace.goal, won=observation.won, steps=steps, llm_calls=trace.usage.cost.calls)
    return record, trace.report.decisions


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    directory = tmp_path_factory.mktemp("plans")
    return write_spec(directory, "grid-plans", ["put_away_groceries"], max_steps=30), directory


@pytest.fixture(scope="module")
def stored_success(world: tuple[str, Path]) -> tuple[Store, ExperienceSource, Environment, list[str]]:
    """A store holding round 0's winning episode, played by a plan-following stand-in."""
    spec, _ = world
    source = load_spec(spec).open()
    env = source.make(source.tasks()[0])
    store = Store.memory()
    store.add_run(RunRecord(id="r", spec="grid-plans", llm="scripted", mode="prag", k=3, rounds=2))
    cache = EmbeddingCache(store, minilm())
    experiences = ExperienceSource(store, cache, "prag", k=3)
    first = PragAgent(ScriptedLLM(plan_follower(plans_of(spec))), experiences, Visibility("r", 0), domain=GRID)
    record, _ = play(env, first)
    assert record.won
    cache.vectors([record.goal] + [s.scene for s in record.steps])
    store.add_episode(record)
    experiences.refresh()
    return store, experiences, env, [s.action for s in record.steps if s.action]


def agent(experiences: ExperienceSource, llm: ScriptedLLM, ask: str = "hard-coded", **kw) -> PragAgent:
    return PragAgent(llm, experiences, Visibility("r", 1), AgentConfig(ask=ask), domain=GRID, **kw)


def test_hard_coded_replays_the_same_tasks_success_without_the_llm(world, stored_success):
    _, experiences, env, actions = stored_success
    record, decisions = play(env, agent(experiences, ScriptedLLM([])))  # any call would fail
    assert record.won and record.llm_calls == 0
    assert [s.action for s in record.steps if s.action] == actions
    assert decisions == [Choice("episode", False, False)] * len(actions)


def test_always_asks_every_step_whatever_the_store_holds(world, stored_success):
    spec, _ = world
    _, experiences, env, actions = stored_success
    record, decisions = play(env, agent(experiences, ScriptedLLM(plan_follower(plans_of(spec))), ask="always"))
    assert record.won and record.llm_calls == len(actions)
    assert all(d.source == "llm" and d.asked for d in decisions)


def test_a_step_that_cannot_be_taken_makes_hard_coded_ask(world, stored_success):
    spec, _ = world
    _, experiences, env, actions = stored_success
    llm = ScriptedLLM(plan_follower(plans_of(spec)))
    mediated = started(agent(experiences, llm), env, ("go to the moon", actions[0]))
    decision = mediated.act(env_first(env))
    assert decision.asked and decision.source == "llm" and len(llm.calls) == 1


def test_a_learned_policy_that_never_asks_passes_over_a_step_it_cannot_take(world, stored_success):
    _, experiences, env, actions = stored_success
    never = agent(experiences, ScriptedLLM([]), ask="learned", asker=Learned(lambda features: False))
    started(never, env, ("go to the moon", actions[0]))
    decision = never.act(env_first(env))
    assert (decision.action, decision.asked, decision.source) == (actions[0], False, "episode")


def env_first(env: Environment):
    """The first observation again (the grid world resets to the same state)."""
    return env.reset()


def started(mediated: PragAgent, env: Environment, steps: tuple[str, ...]) -> PragAgent:
    """An agent reset on the task and following a plan of `steps`."""
    observation = env.reset()
    mediated.reset(observation)
    mediated.arbiter.sources.insert(0, Replay(Plan(steps, "episode")))
    return mediated


class Replay:
    """A scripted proven source: proposes one stored plan (as experience would) at every step."""

    standing = Standing.PROVEN

    def __init__(self, plan: Plan) -> None:
        self.plan = plan

    def propose(self, view: View) -> Proposal:
        return Proposal.of(self.plan)

    def restart(self) -> None:
        pass


def test_the_rooms_own_correction_is_followed_though_another_rooms_transcript_of_the_goal_ranks_first(world):
    """A shipped prior transcript has the goal of a task word for word but was written in another
    room; it ties with the room's own verified correction and, older, ranks first, which is all
    the prompt's one correction shows. The plan taken is the one whose first step can be taken."""
    spec, _ = world
    source = load_spec(spec).open()
    env = source.make(source.tasks()[0])
    first = env.reset()
    plan = env.oracle_plan()
    store = Store.memory()
    cache = EmbeddingCache(store, minilm())
    for origin, steps in (("prior", ["go to the moon"] + plan[1:]), ("edit", plan)):
        add_correction(store, cache, Correction(
            origin=origin, domain=GRID.name, goal=first.goal, instructions=[first.goal],
            transcript=plan_transcript(first.goal, steps), verified=True, scenes=[first.scene_text],
        ))
    corrections = CorrectionSource(store, cache, k=1, domain=GRID.name)
    assert [hit.correction.origin for hit in corrections.retrieve([first.goal], first.scene_text, k=2)] == ["prior", "edit"]
    mediated = PragAgent(ScriptedLLM([]), None, Visibility("r", 1), AgentConfig(ask="hard-coded"), corrections=corrections,
                         domain=GRID)  # any call of the LLM would fail
    record, decisions = play(env, mediated)
    assert record.won and record.llm_calls == 0
    assert decisions == [Choice("correction", False, False)] * len(plan)
