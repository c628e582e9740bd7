"""What past episodes teach (prag.agent.world.state.Lessons) is learned when the episode starts,
whichever sources are chosen: on the real ScienceWorld simulator, a round lost on a wrong focus
(irrevocable: the task fails at -100) teaches the next episode of that variation, played with
search and the LLM and no experience source, not to offer that focus again."""
from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from support import minilm

from prag.agent.agent import PragAgent
from prag.agent.config import AgentConfig
from prag.agent.world.state import Lessons
from prag.envs.sciworld import engine
from prag.envs.sciworld.domain import SCIWORLD
from prag.envs.spec import load_spec
from prag.llm.base import Completion, Cost, Message
from prag.retrieval.embed import EmbeddingCache
from prag.retrieval.episodes import ExperienceSource
from prag.run.config import ExecutionConfig, ExperimentConfig, RunConfig
from prag.run.runner import Runner, start_run
from prag.store import Store
from prag.store.visibility import Visibility

pytestmark = pytest.mark.skipif(
    shutil.which("java") is None,
    reason="ScienceWorld's simulator is a jar: install a Java runtime (apt-get install openjdk-17-jre-headless)",
)

WRONG = "focus on sink"  # in find-living-thing, a focus on a thing not living fails the task outright


@dataclass
class Focusing:
    """A stand-in that takes the wrong focus whenever it is offered, else the first choice."""

    name: str = "focusing"
    supports_choices: bool = True
    offered: list[bool] = field(default_factory=list)  # whether each call was offered the wrong focus

    def complete(self, messages: list[Message], *, choices: list[str] | None = None, **_: Any) -> Completion:
        self.offered.append(bool(choices) and WRONG in (choices or []))
        answer = WRONG if choices and WRONG in choices else (choices or ["look around"])[0]
        return Completion(answer, Cost(calls=1))


def test_a_focus_that_failed_the_variation_before_is_not_offered_again_without_the_experience_source(
    tmp_path: Path,
) -> None:
    engine.close()  # the variation's world as a fresh JVM draws it
    spec = tmp_path / "living.toml"
    spec.write_text('name = "living"\nenv = "sciworld"\nmax_steps = 8\n'
                    '[params]\ntasks = ["find-living-thing"]\nsplit = "train"\nvariations = 1\nseed = 0\n')
    lost = RunConfig(ExperimentConfig(spec=str(spec), rounds=1, llm="focusing"),
                     agent=AgentConfig(ask="hard-coded", sources=("llm",), gamble_window=1.0),
                     execution=ExecutionConfig(answer_cache=False))
    with Store(tmp_path / "sciworld.db") as store:
        run = start_run(store, lost)
        Runner(store, run, lost, llm=Focusing(), encoder=minilm()).play()  # type: ignore[arg-type]
        (episode,) = store.episodes(run.id)
        assert not episode.won and episode.steps[-1].action == WRONG and (episode.steps[-1].score or 0) < 0

        experiences = ExperienceSource(store, EmbeddingCache(store, minilm()), "prag", k=3)
        experiences.refresh()
        loaded = load_spec(str(spec))
        env = loaded.open_unwrapped().make(loaded.open().tasks()[0])

        def agent(llm: Focusing, **config: Any) -> PragAgent:
            made = PragAgent(llm, experiences, Visibility(include_runs=(run.id,)),
                             AgentConfig(gamble_window=1.0, **config), domain=SCIWORLD)
            made.reset(first)
            return made

        first = env.reset()
        assert WRONG in first.admissible
        llm = Focusing()
        searching = agent(llm, ask="hard-coded", sources=("search", "llm"))
        # At step 0, before any source was consulted: the lost round's fatal focus and its thing.
        lessons = searching.state.lessons
        assert WRONG in lessons.fatal and "sink" in lessons.failed_things
        assert lessons.tried_before[(episode.steps[0].observation, episode.steps[0].scene, WRONG)] == 1
        # The same record whichever sources are chosen, and whatever their order.
        for sources in (("experience", "llm"), ("search", "experience", "llm")):
            assert agent(Focusing(), ask="hard-coded", sources=sources).state.lessons == lessons
        # The LLM's step, asked now, is not offered the fatal focus, which it would take.
        decision, _ = searching.llm_step.choose_step(first)
        assert decision.action != WRONG and llm.offered and not any(llm.offered)
        # Played to its end, the episode never takes it.
        observation = first
        while not observation.done:
            decision = searching.act(observation)
            assert decision.action != WRONG
            observation = env.step(decision.action)
            searching.observe(decision.action, observation)
        # A mediator that always asks learns nothing from past episodes but its prompt's examples (P-RAG).
        assert agent(Focusing(), ask="always", sources=("search", "llm")).state.lessons == Lessons()
