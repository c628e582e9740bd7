"""An instruction to carry what the goal had the agent act on irrevocably: ScienceWorld's "First,
focus on the thing. Then, move it to the purple box in the workshop."

The goal's unconditional sentence "<verb> it <to|into|in|on> the <place>[ in the <room>]" (read by
`carry_instruction`) is done by search once every instructed irrevocable step was taken: "it" is
the thing the scene marks as acted on so (`Domain.marked`, ScienceWorld's "focused"), whatever
the actions call it now ("living thing in flower pot 6", then "living thing in inventory"). Where
"<verb> <it> <link> <place>" is admissible, with a thing whose name ends in the place's words in
view, it is taken; else, while the thing is not held (`Domain.held`), the family's verb that readies
a move (`Domain.readies`: "pick up") is taken on it, once (a thing the world will not let go of is left
to the other sources); else the agent goes towards the room the sentence
names (by the ways seen), and where it names none or no way to it is known, find-X seeks the place.
Where the sentence's words are no admissible action ("place it in the blue box"), the family's
way to put a thing somewhere is (`Domain.put`: ScienceWorld's "move ... to ..."). A conditional
sentence is carried once prag.agent.skills.conditions decides its branch.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from prag.agent.skills.instructed import instructions, is_a, names
from prag.envs.base import Observation, Triple
from prag.envs.domain import Domain

_CARRY = re.compile(r"(?P<verb>[a-z]+(?: [a-z]+)?) it (?P<link>to|into|in|on) (?:the )?(?P<place>.+?)"
                    r"(?: in the (?P<room>[a-z ]+))?")


@dataclass(frozen=True)
class CarryInstruction:
    verb: str  # "move"
    link: str  # "to"
    place: str  # "purple box"
    room: str | None  # "workshop": where the place is, as the goal says


def carry_instruction(goal: str, domain: Domain) -> CarryInstruction | None:
    """The goal's instruction to carry the thing it had acted on irrevocably; None without one,
    or for a family whose scene marks no such thing."""
    if domain.marked is None or domain.irrevocable is None:
        return None
    return next((order for order in map(carry_of, instructions(goal)) if order is not None), None)


def carry_of(sentence: str) -> CarryInstruction | None:
    """The carry instruction one sentence (lower case, without its lead) says; None for another."""
    match = _CARRY.fullmatch(sentence)
    return None if match is None else CarryInstruction(match["verb"], match["link"], match["place"], match["room"])


def readying(domain: Domain, thing: str, observation: Observation, taken: Sequence[str | None]) -> str | None:
    """The admissible action of the family's verbs that ready moving a thing (`Domain.readies`:
    "pick up") on `thing` while it is not held, once (a refusal is not asked again); None else.
    The verb and the thing may be followed by where it is taken from ("take cup 1 from box 1")."""
    if thing in domain.held(observation.scene_triples):
        return None
    for verb in domain.readies:
        said = f"{verb} {thing}"
        ready = said if said in observation.admissible else next(
            (action for action in observation.admissible if action.startswith(f"{said} ")), None)
        if ready is not None and ready not in taken:
            return ready
    return None


class Carry:
    """One episode's carry instruction and whether it was done."""

    def __init__(self, goal: str, domain: Domain) -> None:
        self.domain = domain
        self.instruction = carry_instruction(goal, domain)
        self._offered: set[str] = set()

    def instruct(self, sentence: str) -> bool:
        """Take `sentence` (a conditional branch decided: prag.agent.skills.conditions) as the carry
        instruction, where it is one and none was given; whether it was."""
        order = carry_of(sentence) if self.domain.marked is not None and self.instruction is None else None
        self.instruction = order or self.instruction
        return order is not None

    def step(self, observation: Observation, taken: Sequence[str | None]) -> str | None:
        """The admissible action the instruction calls for now: the carry, or what readies it;
        None when it was done, there is nothing marked to carry, or neither can be taken here."""
        order = self.instruction
        if order is None or any(action in self._offered for action in taken):
            return None
        triples = observation.scene_triples
        it = self._marked(triples, taken)
        if it is None:
            return None
        places = {s for s, _, _ in triples if self._is_place(s, triples)}
        for place in sorted(places):
            # The goal's words ("place it in the blue box"), else the family's way to put a thing there.
            said = f"{order.verb} {it} {order.link} {place}"
            put = self.domain.put.format(thing=it, place=place) if self.domain.put is not None else said
            action = next((a for a in (said, put) if a in observation.admissible), None)
            if action is not None:
                self._offered.add(action)
                return action
        return readying(self.domain, it, observation, taken)

    def seeking(self, observation: Observation, taken: Sequence[str | None]) -> CarryInstruction | None:
        """The instruction while its place is to be sought: the thing is held and no place of the
        instruction's words is in view."""
        order = self.instruction
        if order is None or any(action in self._offered for action in taken):
            return None
        triples = observation.scene_triples
        it = self._marked(triples, taken)
        if it is None or it not in self.domain.held(triples):
            return None
        return None if any(self._is_place(s, triples) for s, _, _ in triples) else order

    def _marked(self, triples: Sequence[Triple], taken: Sequence[str | None]) -> str | None:
        """The thing the scene marks as acted on irrevocably: what "it" is; of two ("First, focus
        on the thermometer. Next, focus on the unknown substance B."), the one acted on last."""
        marked = self.domain.marked_things(triples)
        last = next((thing for thing in map(self.domain.aimed_at, filter(None, reversed(taken))) if thing), None)
        if len(marked) > 1 and last is not None:
            named = self.domain.name_of(last, triples).lower()
            return next((thing for thing in marked if self.domain.name_of(thing, triples).lower() == named), marked[0])
        return marked[0] if marked else None

    def _is_place(self, thing: str, triples: Sequence[Triple]) -> bool:
        assert self.instruction is not None
        place = self.instruction.place
        return any(is_a(name, place) for name in names(thing, self.domain, triples))
