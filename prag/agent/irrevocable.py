"""Actions that cannot be undone and fail the task when aimed at the wrong thing (ScienceWorld's
`focus on`), as the family declares them (`Domain.irrevocable`, group `x` the thing).

One is taken on a thing the goal names word for word; on any other thing, only when the LLM,
asked after choosing it, says the thing is what the task means. A "no" withholds that action
for the rest of the episode, and a draw with no model to ask (past the LLM budget) never takes
one. Zero-shot, the 1.5B model read "First, focus on the substance" as an order to focus on
whatever was in view: 5 of the first 6 test variations of ScienceWorld ended at step 1.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

from prag.llm.base import Message

YES, NO = "yes", "no"


class Irrevocable:
    def __init__(self, pattern: str | None) -> None:
        self._pattern = re.compile(pattern) if pattern else None
        self.withheld: set[str] = set()  # said not to be what the task means, this episode

    def thing(self, action: str) -> str | None:
        """The thing an irrevocable `action` is aimed at; None for any other action."""
        match = self._pattern.fullmatch(action) if self._pattern else None
        return match["x"] if match else None

    def doubtful(self, action: str, goal: str) -> bool:
        """Irrevocable, and aimed at a thing the goal does not name."""
        thing = self.thing(action)
        return thing is not None and re.search(rf"\b{re.escape(thing)}\b", goal.lower()) is None

    def safe(self, actions: Sequence[str], goal: str) -> list[str]:
        """`actions` less the doubtful ones: what may be taken with no model to ask."""
        return [action for action in actions if not self.doubtful(action, goal)]

    def question(self, prompt: list[Message], action: str) -> list[Message]:
        """The prompt the model chose `action` from, its choice, and the check."""
        thing = self.thing(action)
        ask = (f"'{action}' cannot be undone, and the task fails at once if {thing} is not the thing the "
               f"task means. Is {thing} exactly the thing the task asks for? Answer {YES} or {NO}.")
        return prompt + [{"role": "assistant", "content": action}, {"role": "user", "content": ask}]


def said_yes(answer: str) -> bool:
    """A yes, however a backend that cannot hold it to the two words wrote it ("Yes.")."""
    return answer.strip().lower().startswith(YES)
