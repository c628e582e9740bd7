"""Stand-ins for an LLM, for tests of agent and runner logic and for benchmarks of the other sources.

`ScriptedLLM` answers from a list (in order) or from a function of the messages, records every
call, and accounts tokens as whitespace-separated words, with the prefix shared with the previous
call counted as cached, so prompt-layout logic can be tested without a model. `RandomChoiceLLM`
picks uniformly among the choices it is offered: what the agent wins with no model at all.
"""

from __future__ import annotations

from collections.abc import Callable
import random
from dataclasses import dataclass, field
from typing import Any

from prag.errors import LLMError
from prag.llm.base import Completion, Cost, Message


@dataclass
class ScriptedLLM:
    """Stand-in LLM: `answers` is a list consumed in order, or `f(messages) -> answer`."""

    answers: list[str] | Callable[[list[Message]], str]
    name: str = "scripted"
    supports_choices: bool = False  # it never constrains: answers come out as scripted
    calls: list[dict[str, Any]] = field(default_factory=list)
    _previous: list[str] = field(default_factory=list, repr=False)

    def complete(
        self,
        messages: list[Message],
        *,
        max_tokens: int = 64,
        stop: list[str] | None = None,
        choices: list[str] | None = None,
        more_lines: int = 0,
        temperature: float = 0.0,
        seed: int = 0,
        grammar: str | None = None,
    ) -> Completion:
        self.calls.append(
            {"messages": [dict(m) for m in messages], "choices": choices, "grammar": grammar, "more_lines": more_lines,
             "stop": stop, "max_tokens": max_tokens}
        )
        if callable(self.answers):
            text = self.answers(messages)
        elif len(self.calls) <= len(self.answers):
            text = self.answers[len(self.calls) - 1]
        else:
            raise LLMError(f"ScriptedLLM ran out of answers after {len(self.answers)} calls")
        words = [w for m in messages for w in (m["role"] + " " + m["content"]).split()]
        cached = 0
        for a, b in zip(self._previous, words):
            if a != b:
                break
            cached += 1
        self._previous = words
        return Completion(text, Cost(
            calls=1,
            prompt_tokens=len(words),
            cached_tokens=min(cached, max(len(words) - 1, 0)),
            completion_tokens=len(text.split()),
        ))


@dataclass
class RandomChoiceLLM:
    """Stand-in LLM: one of the offered choices (the admissible actions), uniformly at random,
    seeded; "look" when offered none. `calls` counts its calls."""

    seed: int = 0
    name: str = "random-choice"
    supports_choices: bool = True
    calls: int = 0
    _random: random.Random = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._random = random.Random(self.seed)

    def complete(self, messages: list[Message], *, choices: list[str] | None = None, **_: Any) -> Completion:
        self.calls += 1
        return Completion(self._random.choice(choices) if choices else "look", Cost(calls=1))
