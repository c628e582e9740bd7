"""Actions that cannot be undone and fail the task when aimed at the wrong thing (ScienceWorld's
`focus on`), as the family declares them (`Domain.irrevocable`, group `x` the thing).

One aimed at a thing the goal names as its target (what its instructions say to focus on, or what
the task is about: prag.agent.skills.instructed; by the action's words or by the thing's own name, which
the scene may give: `Domain.name_of`) is offered like any other action. One aimed at
any other thing is a gamble: a wrong one ends the episode and forfeits everything the steps left
could still earn (ScienceWorld's partial credit), so it is offered only in the last tenth of the
step budget (`AgentConfig.gamble_window`, `prag run --gamble-window`), where little is left to
forfeit, and only while the episode has earned no score (where the family keeps one) that a
wrong one would lose, or less than a right one wins where its chance is known (one of two
branches of a goal's condition: prag.agent.skills.conditions). A step that carries something to a place
a conditional branch names ("If it is conductive, place it in the green box"), or an irrevocable
step on what a branch says to act on so ("If the melting point is above 50.0 degrees celsius,
focus on the green box"), answers the branch, and is held back alike until the branch is decided
(search then takes it). A stored route of another variation ended in its own branch's answer:
the progress source took it here, and failed both melting-point tasks in a round.
Plans from experience are not held back: a stored episode's progress that took one is evidence
the LLM's pick is not (its failures are, in turn, never offered again: prag.agent.sources.past_episodes's fatal
actions).

Why not ask the model: zero-shot, the 1.5B model read "First, focus on the substance" as an order
to focus on whatever was in view (6 of the first 7 test variations of ScienceWorld ended at step 1),
and asked whether the thing was what the task meant, it said yes 6 times of 6; its yes-over-no
logit margin was no higher on the right thing than on the wrong one (docs/records/sciworld-learning.md).
"""
from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from functools import lru_cache

from prag.agent.skills.carry import carry_of
from prag.agent.skills.conditions import branches
from prag.agent.skills.instructed import names, names_the_target, sentences
from prag.envs.base import Observation, Triple
from prag.envs.domain import Domain
from prag.text import without_article

FULL_SCORE = 100.0  # a won task's score, where the family keeps one (ScienceWorld's)


class Irrevocable:
    def __init__(self, domain: Domain) -> None:
        self.domain = domain

    def doubtful(self, action: str, goal: str, triples: Sequence[Triple]) -> bool:
        """Irrevocable, and aimed at a thing that is neither what the goal's instructions name nor
        what the task is about, by the action's words or by the thing's own name (the scene's
        `triples` give it: "substance in toilet" is water): prag.agent.skills.instructed."""
        thing = self.domain.aimed_at(action)
        return thing is not None and not names_the_target(goal, self.domain, names(thing, self.domain, triples))

    def deferred(self, actions: Sequence[str], goal: str, observation: Observation, t: int, max_steps: int,
                 window: float, grown: Collection[str] = ()) -> set[str]:
        """The doubtful ones among `actions`, and those ending in a place a conditional branch
        carries to (`answer_places`), unless step `t` (from 1) is in the last `window` (a fraction)
        of `max_steps` and the episode has earned no score it would forfeit, or `window` is the
        whole budget (the LLM decides); and, always, the `repeated` ones but those `grown` (the
        caller's: on a thing at another stage since, the "hatchling dove" focused as an egg)."""
        triples = observation.scene_triples
        repeated = self.repeated(actions, triples) - set(grown)
        if gambling(observation, t, max_steps, window):
            return repeated
        answers = answer_places(goal)
        targets = answer_targets(goal, self.domain.irrevocable)
        return repeated | {action for action in actions
                           if self.doubtful(action, goal, triples) or self.domain.aimed_at(action) in targets
                           or any(into(action, place) for place in answers)}

    def repeated(self, actions: Iterable[str], triples: Sequence[Triple]) -> set[str]:
        """Those aimed at a thing the scene marks as acted on so already (`Domain.marked`): never
        offered again. ScienceWorld fails the task on a second `focus on` the thermometer."""
        marked = set(self.domain.marked_things(triples))
        return {action for action in actions if self.domain.aimed_at(action) in marked}


@lru_cache(maxsize=256)
def answer_places(goal: str) -> frozenset[str]:
    """The places the goal's conditional branches carry a thing to ("If it is electrically
    conductive, place it in the green box"): an action ending there answers the branch, and a
    wrong answer fails the task as a wrong focus does (a random "pour table into green box" did)."""
    return frozenset(carried.place for carried in (carry_of(branch.instruction) for branch in branches(sentences(goal)))
                     if carried is not None)


@lru_cache(maxsize=256)
def read_off(goal: str) -> bool:
    """Whether the goal's conditional branches compare a quantity ("if the melting point of water is
    above 150.0 degrees celsius"): a reading decides them (prag.agent.skills.conditions), not what a
    person's episode of another variation showed."""
    return any(branch.compared is not None for branch in branches(sentences(goal)))


@lru_cache(maxsize=256)
def answer_targets(goal: str, irrevocable: str | None) -> frozenset[str]:
    """The things the goal's conditional branches say to take an irrevocable step on ("focus on
    the green box": green box, by the family's `irrevocable` pattern): that step answers the branch."""
    aimed = (re.fullmatch(irrevocable, branch.instruction) if irrevocable is not None else None
             for branch in branches(sentences(goal)))
    return frozenset(without_article(match["x"]) for match in aimed if match is not None)


def into(action: str, place: str) -> bool:
    """Whether `action` puts something in `place` ("pour table into green box"; not "open green box")."""
    return re.search(rf"\s(?:to|into|in|on) {re.escape(place)}$", action) is not None


def gambling(observation: Observation, t: int, max_steps: int, window: float, chance: float = 0.0,
             later: int = 0) -> bool:
    """Whether a gamble on an irrevocable step may be taken at step `t`: `window` is the whole
    budget, or `t` is in its last `window` and the score the episode would forfeit is less than
    what the gamble wins at its `chance` of being right (of a full score of 100): with no chance
    known, where no score was earned. Where `later` rounds play the task again and the chance
    is known, at any step, over this round and those: a right answer wins them all (replayed),
    a wrong one is ruled out there, whose chance is then one of the branches left (at 60 points
    earned and one round to come, one of two branches is worth 150 against 120 kept; at 78,
    150 against 156 is not, and with two rounds to come 250 against 234 is). Waiting for the
    last tenth, a round's draws had carried the thing off to another room by then, and the
    answer was never reached."""
    if window >= 1.0:
        return True
    held = observation.score if observation.score is not None else 0.0
    if max_steps - t < gamble_steps(max_steps, window) and (held <= 0 or held < FULL_SCORE * chance):
        return True
    if later <= 0 or chance <= 0:
        return False
    branches_left = round(1 / chance)
    next_chance = 1 / (branches_left - 1) if branches_left > 1 else 1.0
    plays = 1 + later
    return plays * held < FULL_SCORE * (plays * chance + (1 - chance) * later * next_chance)


def gamble_steps(max_steps: int, window: float) -> int:
    """How many of the last steps may take a doubtful irrevocable action: `window` of them, at least one."""
    return max(1, int(max_steps * window))
