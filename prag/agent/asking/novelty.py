"""Exploration that seeks what is new: the step drawn once the LLM budget is spent (after
Go-Explore: return to the best state reached, then explore from there).

Returning is the experience source's part (a lost episode's progress is replayed up to its best
score, prag.agent.sources.past_episodes). What is drawn after it is no uniform draw over the admissible actions:
ScienceWorld lists thousands, most of them `connect X to Y`, so a uniform draw connected wires to
doors for the rest of an episode. The draw goes by tiers, the first that holds any action:

0. of the actions of tier 1, those of a verb the score rose after in this task (`rewarded`: in
   this episode or a stored one of this very task, moves and irrevocable steps aside), drawn
   every other step: the
   world's reward says what kind of step made progress here ("connect" once a wire connected to
   the motor earned points), and the things those steps acted on are the task's too (the wire);
1. actions on the things the task names (by the actions' words or a thing's own name, as the
   goal's words say them) or marked as acted on (`Domain.marked`), or on a part of one ("connect
   anode in electric motor to ..."), or on what holds one of them
   and nothing else ("activate stove" once the ice cream is on it), that this task has not
   taken yet (each place an ice cream may be moved to is tried in its turn);
2. any action this task has not taken yet;
3. actions on the things the task names;
4. any action.

"This task has tried" counts this episode's actions and those of the stored lost episodes of
this very task (what an earlier round did, prag.agent.sources.past_episodes.tried_before). Within a tier a
verb is drawn first, uniformly among the verbs the tier offers, then one of its actions: a verb
with a thousand actions weighs as much as one with three. (Untried (verb, thing) pairs rather than
actions, in the second tier, held a thing forever once it had been put down somewhere: on the tidy
family they won less than uniform draws, 29 against 33 mean score in round 2; untried actions 54.)
"""
from __future__ import annotations

import random
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from prag.envs.base import Triple
from prag.envs.domain import Domain

Pair = tuple[str, str]  # (verb, the first thing it names): "move", "ice cream"


def pair(action: str, domain: Domain) -> Pair:
    """An action's verb (its words before the first name) and the first name it acts on; the
    whole action and "" where it names nothing ("look around", "wait")."""
    names = domain.entities(action)
    if not names:
        return action, ""
    verb = action.lower().split(names[0], 1)[0].strip()
    return verb or action, names[0]


def named_things(goal: str, triples: Iterable[Triple], domain: Domain) -> set[str]:
    """The things of a scene the task is about: those the goal's words name (the thing's name or
    its own name as a phrase of the goal) and the things marked as acted on."""
    triples = list(triples)
    words = " " + " ".join(re.findall(r"[a-z0-9]+", goal.lower())) + " "
    things = {s for s, _, _ in triples} | {o for _, r, o in triples if r in domain.placement}
    named = {thing for thing in things if any(
        f" {phrase} " in words for phrase in _phrases(thing, domain.name_of(thing, triples)))}
    return named | set(domain.marked_things(triples))


def holders(things: Collection[str], triples: Iterable[Triple], domain: Domain, here: str | None) -> set[str]:
    """What `things` are in or on, but the room the agent is in (the stove the ice cream was put on)."""
    return {o for s, r, o in triples if s in things and r in domain.placement and o != here}


def _phrases(*names: str) -> set[str]:
    return {" ".join(re.findall(r"[a-z0-9]+", name.lower())) for name in names} - {""}


@dataclass(frozen=True)
class Explorer:
    """Draws the step past the LLM budget for one episode's task."""

    domain: Domain
    seed: int = 0

    def draw(self, choices: Sequence[str], goal: str, triples: Sequence[Triple], tried: Collection[str],
             here: str | None = None, salt: str = "", rewarded: Collection[str] = ()) -> str:
        """One of `choices` (not empty), by the tiers above; `tried` are the actions this task
        tried, `here` the room the agent is in, `rewarded` the actions its score rose after."""
        named = named_things(goal, triples, self.domain)
        held_in = holders(named, triples, self.domain, here)
        relevant = [a for a in choices if self._about(a, named, held_in)]
        untried = [a for a in choices if a not in tried]
        rng = random.Random(f"{self.seed}:{salt}")
        # Not moves, and not irrevocable steps (a focus that paid once is done: drawing more of
        # them fails the task on the first wrong one).
        progress = [a for a in rewarded if self.domain.movement(a) is None and self.domain.aimed_at(a) is None]
        paid: list[str] = []
        # Every other step, not every step: the verb that paid once is not the only one that may pay next.
        if progress and rng.random() < 0.5:
            verbs = {pair(a, self.domain)[0] for a in progress}
            things = named_things(" ".join([goal, *progress]), triples, self.domain) | held_in
            paid = [a for a in untried if pair(a, self.domain)[0] in verbs and self._mentions(a, things)]
        tiers = (paid, [a for a in relevant if a not in tried], untried, relevant, list(choices))
        tier = next(t for t in tiers if t)
        by_verb: dict[str, list[str]] = {}
        for action in tier:
            by_verb.setdefault(pair(action, self.domain)[0], []).append(action)
        verb = rng.choice(sorted(by_verb))
        return rng.choice(by_verb[verb])

    def _mentions(self, action: str, things: set[str]) -> bool:
        """Whether any name in the action is one of `things` or a part of one ("black wire terminal 2")."""
        return any(name in things or any(name.startswith(thing + " ") for thing in things)
                   for name in self.domain.entities(action))

    def _about(self, action: str, named: set[str], held_in: set[str]) -> bool:
        """Whether the action acts on a thing the task is about ("move ice cream to stove"), or on
        a part of one ("connect anode in electric motor to ..."), or on what holds one and nothing
        else ("activate stove"; not "pour cup into stove")."""
        names = self.domain.entities(action)
        part_of = len(names) > 1 and f"{names[0]} in {names[1]}" in action.lower() and names[1] in named
        return bool(names) and (names[0] in named or part_of or (len(names) == 1 and names[0] in held_in))


def uniform(choices: Sequence[str], seed: int = 0, salt: str = "") -> str:
    """A uniform draw (`--explore uniform`, the baseline the tiers are measured against)."""
    return random.Random(f"{seed}:{salt}").choice(list(choices))
