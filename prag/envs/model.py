"""A family's action model for means-ends search: the PDDL planning problem a family writes from
what the agent has observed (prag.agent.world.search solves it with Fast Downward).

A model reads only `Seen`, what the agent was shown this episode (prag.agent.world.observed.Observed
has this shape); never the game's hidden state. Each family says how its actions look as PDDL
operators and how a plan's operators read back as its commands.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Protocol


class Seen(Protocol):
    """What an action model reads of the agent's observations this episode."""

    @property
    def places(self) -> Sequence[str]: ...  # the places known by name

    @property
    def location(self) -> str | None: ...  # where the agent is (a place, a room, or neither)

    @property
    def seen(self) -> Mapping[str, str]: ...  # thing -> the place it was last seen in or on

    @property
    def held(self) -> AbstractSet[str]: ...

    @property
    def visited(self) -> AbstractSet[str]: ...  # places the agent has been at

    @property
    def opened(self) -> AbstractSet[str]: ...  # places seen open

    @property
    def closed(self) -> AbstractSet[str]: ...  # places seen closed and not seen open since

    @property
    def states(self) -> Mapping[str, AbstractSet[str]]: ...  # thing or place -> states seen ("hot", "on", ...)

    @property
    def room_of(self) -> Mapping[str, str]: ...  # place or door -> its room (families with rooms)

    @property
    def ways(self) -> Mapping[str, str]: ...  # room -> a door seen leading to it

    @property
    def actions(self) -> Sequence[str]: ...  # the actions taken this episode, in order


@dataclass(frozen=True)
class Problem:
    """A PDDL problem for a PDDL domain, and how its plan's operators read as commands."""

    domain: str  # PDDL domain text
    problem: str  # PDDL problem text
    command: Callable[[str], str]  # a planner's operator ("pickupobject agent1 l apple_1 r") -> the command


def is_open(seen: Seen, place: str) -> bool:
    """Whether a place was last seen open."""
    return place in seen.opened and place not in seen.closed


def pddl_name(name: str) -> str:
    """A name as a PDDL identifier ("apple 1" -> "apple_1"); names are lower-case words and numbers."""
    return "_".join(name.split())


def game_name(identifier: str) -> str:
    """The inverse of `pddl_name` ("apple_1" -> "apple 1")."""
    return identifier.replace("_", " ")
