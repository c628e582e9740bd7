"""One agent factory (prag.run.agents): the agent the ask-policy trainer trains is the agent a run
plays, reading the same store the same way: its episodes, corrections, places, verified goal
readings and the action model learned from it."""
from __future__ import annotations

from typing import Any

import pytest
from support import minilm

from prag.agent.agent import PragAgent
from prag.agent.config import AgentConfig
from prag.agent.protocol import Agent
from prag.envs.base import Observation
from prag.envs.spec import load_spec
from prag.llm import make_llm
from prag.run.asker import Forced, prag_agents
from prag.run.config import ExperimentConfig, RetrievalConfig, RunConfig
from prag.run.runner import Runner, start_run
from prag.store import Store
from prag.store.records import StepRecord

# Search plans with the action model learned from the store (ALFWorld has a given one besides):
# an agent built without it plans otherwise.
AGENT = AgentConfig(ask="hard-coded", sources=("experience", "search", "llm"), action_model="learned")


class _Built(Exception):
    """Raised before the runner's agent takes its first action: it is looked at, not played."""


def _reads(agent: PragAgent, observation: Observation, kinds: list[str]) -> dict[str, Any]:
    """What an agent reads of the store for this first observation, and how it is set up."""
    s = agent.settings
    corrections, model = s.corrections, s.world_model
    return {
        "config": s.config,
        "seed": s.seed,
        "domain": s.domain.name,
        "episodes": [e.episode.id for e in s.experiences.retrieve(observation.goal, observation.scene_text, s.visibility)]
        if s.experiences is not None else None,
        "corrections": None if corrections is None else (corrections.k, [c.id for c in corrections.corrections]),
        "places": {kind: s.ranking(kind) for kind in kinds},
        "readings": [(r.wording, r.sentence) for r in s.recall(observation.goal)],
        "world model": None if model is None else model.to_json(),
    }


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A store holding round 0 of two generated ALFWorld games, played with the random LLM."""
    path = tmp_path_factory.mktemp("factory") / "s.db"
    config = RunConfig(ExperimentConfig(spec="alfworld-mini", rounds=1, limit=2, llm="random"), agent=AGENT)
    with Store(path) as opened:
        Runner(opened, start_run(opened, config, "r0"), config, encoder=minilm()).play()
        assert any(e.won for e in opened.episodes("r0"))  # a win verifies its goal reading
    return path


def test_the_trainer_builds_the_agent_a_run_plays(store) -> None:
    # A run whose round 0 sees all of r0, as the trainer sees all of the store.
    config = RunConfig(ExperimentConfig(spec="alfworld-mini", rounds=1, limit=2, llm="random"),
                       RetrievalConfig(include_runs=("r0",)), AGENT)
    spec = load_spec("alfworld-mini")
    with Store(store) as opened:
        runner = Runner(opened, start_run(opened, config, "play"), config, encoder=minilm())
        phase = next(runner.phases())
        task = phase.tasks[0]
        played: list[tuple[Agent, Observation]] = []

        def look(step: StepRecord, observation: Observation, agent: Agent) -> bool:
            played.append((agent, observation))
            raise _Built

        with pytest.raises(_Built):
            runner.play_one(phase, task, look)
        (ran, observation), = played
        trained = prag_agents(opened, spec, make_llm("random"), minilm(), config=config)(task, Forced())
        assert isinstance(ran, PragAgent) and isinstance(trained, PragAgent)
        kinds = [kind for kind, _ in opened.places.kinds()]  # every kind of thing the store saw placed
        ran_reads, trained_reads = _reads(ran, observation, kinds), _reads(trained, observation, kinds)
    assert trained_reads == ran_reads
    # Each reads something: an agent built without a reader would differ from the run's.
    assert ran_reads["episodes"] and ran_reads["corrections"][1] and ran_reads["readings"]
    assert any(ran_reads["places"].values()) and ran_reads["world model"] is not None
