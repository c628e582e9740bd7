"""The prompt laid out for the prefix cache, with the real 0.5B model: the retrieved examples are
chosen once an episode, so their block stays byte-identical across the episode's calls and is
read once (llama.cpp's prefix reuse, as the backend counts it); retrieved every step, as P-RAG
plays, it changes with the scene. And an answer constrained to the numbers of the listed actions
is always one of them."""
from __future__ import annotations

import re
import zlib
from dataclasses import replace
from typing import Any

import pytest

from prag.agent.agent import PragAgent
from prag.agent.config import AgentConfig
from prag.agent.config import PromptLimits
from prag.envs.base import Task
from prag.llm.base import LLM, Completion, Message
from prag.llm.local import LocalLLM
from prag.llm.scripted import ScriptedLLM
from prag.retrieval.episodes import Experience
from prag.retrieval.index import Hit, Visibility
from prag.store.records import EpisodeRecord, StepRecord
from tests.families.pantry import DOMAIN, PantryEnv

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
from local_models import llm  # noqa: E402,F401  (the module-scoped 0.5B model, a fixture)


def _past(number: int) -> EpisodeRecord:
    """A won pantry episode: go to a place, take the thing, put it elsewhere."""
    place, target = ("shelf 1", "table 1") if number % 2 else ("counter 1", "shelf 2")
    steps = [StepRecord(0, None, "You are in the pantry.", "at: pantry"),
             StepRecord(1, f"go to {place}", f"You go to {place}.", f"at: {place}", place),
             StepRecord(2, f"take cup 1 from {place}", f"You take cup 1 from {place}.", f"at: {place}", place),
             StepRecord(3, f"go to {target}", f"You go to {target}.", f"at: {target}", target),
             StepRecord(4, f"put cup 1 on {target}", f"You put cup 1 on {target}.", f"at: {target}", target)]
    return EpisodeRecord("r", 0, f"put-{number}", "put", f"put a cup on {target.split()[0]}", True, steps, id=number)


class Shifting:
    """Stored episodes ranked by the scene graph: each scene puts others on top, by far more than
    the margin that keeps a shown example."""

    k = 2

    def retrieve(self, goal: str, scene: str, visibility: Visibility, k: int | None = None) -> list[Experience]:
        episodes = sorted((_past(n) for n in range(1, 6)), key=lambda e: zlib.crc32(f"{scene}:{e.id}".encode()))
        return [Experience(Hit(e.id, 3.0 - rank, 1.0, 2.0 - rank, None), e) for rank, e in enumerate(episodes)][: k or self.k]


class Recorded:
    """An LLM whose every call is kept with its prompt."""

    def __init__(self, inner: LLM) -> None:
        self.inner, self.name = inner, inner.name
        self.calls: list[tuple[list[Message], Completion]] = []

    @property
    def supports_choices(self) -> bool:
        return self.inner.supports_choices

    def complete(self, messages: list[Message], **options: Any) -> Completion:
        done = self.inner.complete(messages, **options)
        self.calls.append(([dict(m) for m in messages], done))
        return done


def _play(llm: LLM, limits: PromptLimits, steps: int = 6) -> Recorded:
    recorded = Recorded(llm)
    config = AgentConfig(ask="always", sources=("llm",), limits=limits)
    agent = PragAgent(recorded, Shifting(), Visibility(), config, domain=DOMAIN)  # type: ignore[arg-type]
    env = PantryEnv(Task("put-9", "put", 9))
    observation = env.reset()
    agent.reset(observation)
    for _ in range(steps):
        decision = agent.act(observation)
        assert decision.action in observation.admissible and decision.valid
        observation = env.step(decision.action)
        agent.observe(decision.action, observation)
    return recorded


def test_the_retrieved_block_stays_byte_identical_and_is_read_once(llm: LocalLLM) -> None:
    recorded = _play(llm, PromptLimits())
    blocks = {messages[1]["content"] for messages, _ in recorded.calls}
    assert len(recorded.calls) == 6 and len(blocks) == 1 and "Past attempts" in blocks.pop()
    first_messages = recorded.calls[0][0]
    prefix = len(llm.prompt_tokens(first_messages[:3])) - 3  # the rules, the examples, "Understood."
    for _, done in recorded.calls[1:]:
        assert done.cost.cached_tokens >= prefix  # the examples were not evaluated again


def test_retrieved_every_step_the_block_changes_with_the_scene() -> None:
    """What the test above would see with P-RAG's timing: it can fail."""
    answer = ScriptedLLM(lambda messages: "go to " + re.search(r"go to: ([^,;\n]+)", messages[-1]["content"])[1])
    recorded = _play(answer, PromptLimits(retrieve="step"))  # type: ignore[arg-type]
    assert len({messages[1]["content"] for messages, _ in recorded.calls}) > 1


def test_an_answer_constrained_to_the_actions_numbers_is_always_admissible(llm: LocalLLM) -> None:
    recorded = _play(llm, replace(PromptLimits(), numbered=True), steps=8)
    for messages, done in recorded.calls:
        assert "Admissible actions, by number:\n1. " in messages[-1]["content"]
        listed = messages[-1]["content"].split("Admissible actions, by number:\n", 1)[1].split("\n")
        numbers = {line.split(". ", 1)[0] for line in listed if ". " in line and line.split(". ", 1)[0].isdigit()}
        assert done.text in numbers  # one of the numbers listed, whatever the model would rather say
    assert recorded.calls[0][1].cost.completion_tokens <= 2
