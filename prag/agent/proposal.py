"""What a source of steps is to the arbiter (prag.agent.sources.arbiter): it declares its standing,
and proposes for what it sees (`propose(view) -> Proposal | None`; None: it has nothing to say this
step). When the goal is revised it restarts, forgetting what it proposed for the old reading."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import ClassVar, Protocol

from prag.agent.plans import Plan
from prag.agent.protocol import Decision
from prag.envs.base import Observation


class Standing(StrEnum):
    """How far a source's plans are trusted: the arbiter's rule for them (arbiter.RULES)."""

    PROVEN = "proven"  # played to a win before (or corrected by a person): followed while it has steps
    SEARCHED = "searched"  # made for this step from what was seen and learned: yields to a proven plan it can take
    GUESSED = "guessed"  # an answer asked for: replaces only a plan that ran out or another guess


@dataclass(frozen=True)
class Proposal:
    """A source's proposal for one step: its plans, best first, and, from an asked source, the
    step it chose now. No plans at all says the source has none now (arbiter.RULES: what that does)."""

    plans: tuple[Plan, ...] = ()
    elsewhere: tuple[Plan, ...] = ()  # after `plans`: started elsewhere, adopted only where their first step can be taken
    decision: Decision | None = None  # an asked source's step, taken now

    @classmethod
    def of(cls, plan: Plan | None) -> Proposal:
        """One plan, or none."""
        return cls((plan,) if plan is not None else ())


class Followed(Protocol):
    """The plan being followed, as a source sees it (read only)."""

    @property
    def plan(self) -> Plan | None: ...

    @property
    def left(self) -> int: ...

    def step_now(self, admissible: Sequence[str]) -> str | None: ...


@dataclass(frozen=True)
class View:
    """What a source sees when it proposes: the observation, and the plan being followed as
    the earlier sources' proposals left it (live: a goal revised mid-proposal ends it)."""

    observation: Observation
    followed: Followed

    @property
    def plan(self) -> Plan | None:
        return self.followed.plan

    @property
    def left(self) -> int:
        return self.followed.left

    def step_now(self) -> str | None:
        """The admissible action the followed plan's next step stands for now, or None."""
        return self.followed.step_now(self.observation.admissible)


class Proposer(Protocol):
    """A source of steps: its standing, and its proposal for what it sees."""

    standing: ClassVar[Standing]

    def propose(self, view: View) -> Proposal | None:
        """Plans for this step, best first, or None: nothing to say."""
        ...

    def restart(self) -> None:
        """The goal was revised (the arbiter restarted too): propose for the new reading afresh."""
        ...
