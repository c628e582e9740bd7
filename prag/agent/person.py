"""A person beside the agent (Soar ITL's human source): yes/no on the LLM's proposals, and the
next step in words when asked, with the effort it cost them counted.

The agent shows the person what the LLM proposes; the person answers yes, no, or, instead of
yes/no, says what to do. After three rejections in a row the agent asks for the next step in
words. Effort is counted as Kirk et al. count it: instructions, their words, and yes/no answers.
"""
from __future__ import annotations

from typing import Protocol, runtime_checkable

from prag.envs.base import Observation


@runtime_checkable
class Person(Protocol):
    """Someone the agent may ask: the console's user, or a scripted one in benchmarks."""

    def confirm(self, action: str, observation: Observation) -> bool | str:
        """Yes (True) or no (False) to the proposed action; or, instead, an instruction in words."""
        ...

    def instruct(self, observation: Observation) -> str | None:
        """The next step in words (an admissible action or anything else); None: nothing to say."""
        ...

    def confirm_reading(self, instruction: str, sentence: str | None) -> bool | str:
        """Yes (True) or no (False) to reading `instruction` as the goal `sentence`; or the right
        goal in words. `sentence` None: no reading was found, and only words help."""
        ...
