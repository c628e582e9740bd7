"""Plans: sequences of actions the actor follows without asking the LLM, and where they came from.

A plan comes from the LLM's answer, from experience (a retrieved episode, a person's correction) or
from search (find-X, the goal's sub-goals, means-ends): its source is a `prag.sources.StepSource`.
One taken from experience is adapted to the present task: when the goals differ, the kinds of
things the source goal names are re-bound, in the order the goal names them, to the kinds the
present goal names ("heat an apple and put it on the countertop" serves "heat a potato and put
it in diningtable": apple -> potato, countertop -> diningtable).
Instance numbers are not known in advance: a re-bound entity matches any number of its kind
when the step's turn comes (`resolve`). In self-iteration the same task's own success needs
no re-binding.

Re-binding reads object names through the environment family's `Domain` (`entities`, `kind`),
so it works for every family.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Protocol

from prag.sources import StepSource
from prag.store.records import EpisodeRecord

# Articles are left out of goals before they are compared, and the link words of goal
# templates are one word ("put it in diningtable" / "put it on the countertop").
ARTICLES = {"a", "an", "the", "some"}
LINKS = {"on": "in", "into": "in", "onto": "in"}


class Names(Protocol):
    """What plans need of a Domain: how object names look in actions and text."""

    def entities(self, text: str) -> list[str]:
        """The names of things and places in a text, in order (ALFWorld: "apple 1")."""
        ...

    def kind(self, entity: str) -> str:
        """The kind of an entity ("apple 1" -> "apple")."""
        ...


@dataclass(frozen=True)
class Plan:
    """A sequence of actions, where it came from, and the bindings it was adapted with."""

    steps: tuple[str, ...]
    source: StepSource
    origin: int | None = None  # the episode's or correction's id
    bindings: tuple[tuple[str, str], ...] = ()  # (kind in the source, kind here)
    goal: str = ""  # the goal the plan was made for

    @property
    def rebound(self) -> frozenset[str]:
        """The kinds this plan took from another task: their instance numbers are unknown here."""
        return frozenset(new for old, new in self.bindings if old != new)


@dataclass
class Follower:
    """The actor's place in a plan: which step comes next. Steps are taken in order: a step
    that cannot be taken now is not skipped (the mediator asks the LLM instead), since the
    steps after it (heat it, put it) rely on what it does."""

    plan: Plan
    next: int = 0

    @property
    def left(self) -> int:
        return len(self.plan.steps) - self.next

    def step_now(self, admissible: Sequence[str], names: Names) -> str | None:
        """The admissible action the next step stands for now, or None."""
        if self.left <= 0:
            return None
        return resolve(self.plan.steps[self.next], admissible, names, self.plan.rebound)

    def advance(self) -> None:
        self.next += 1


def words(goal: str) -> list[str]:
    """A goal's words as goal templates are compared: no articles, one link word."""
    return [LINKS.get(word, word) for word in re.findall(r"[a-z]+", goal.lower()) if word not in ARTICLES]


def bind_goals(source_goal: str, present_goal: str, source_kinds: set[str]) -> dict[str, str] | None:
    """Kind -> kind re-binding from a source goal to the present one, or None when the two goals
    are not the same template.

    `source_kinds` are the kinds in the source's actions: where the source goal names one
    (several words for kinds such as "watering can"), the present goal may name any kind;
    every other word must be the same in both goals.
    """
    parts: list[str] = []
    kinds: list[str] = []
    old = words(source_goal)
    i = 0
    while i < len(old):
        span = next(
            (n for n in range(min(3, len(old) - i), 0, -1) if " ".join(old[i : i + n]) in source_kinds), 0
        )
        if span:
            kinds.append(" ".join(old[i : i + span]))
            parts.append(r"([a-z]+(?: [a-z]+)*?)")
            i += span
        else:
            parts.append(re.escape(old[i]))
            i += 1
    match = re.fullmatch(" ".join(parts), " ".join(words(present_goal)))
    if match is None:
        return None
    binding: dict[str, str] = {}
    for kind, new in zip(kinds, match.groups()):
        if binding.setdefault(kind, new) != new:
            return None
    return binding


def adapt(
    actions: Sequence[str], source_goal: str, present_goal: str, names: Names, source: StepSource, origin: int | None = None
) -> Plan | None:
    """A plan for the present goal from the actions that reached `source_goal`, or None when
    the tasks do not match."""
    if source_goal == present_goal:
        return Plan(tuple(actions), source, origin, (), present_goal)
    kinds = {names.kind(entity) for action in actions for entity in names.entities(action)}
    binding = bind_goals(source_goal, present_goal, kinds)
    if binding is None:
        return None
    steps = tuple(rebind(action, binding, names) for action in actions)
    return Plan(steps, source, origin, tuple(sorted(binding.items())), present_goal)


def rebind(action: str, binding: dict[str, str], names: Names) -> str:
    """The action with each entity of a re-bound kind renamed to the new kind (same number)."""
    out = action
    for entity in names.entities(action):
        kind = names.kind(entity)
        if kind in binding and binding[kind] != kind:
            out = re.sub(rf"\b{re.escape(entity)}\b", binding[kind] + entity[len(kind) :], out)
    return out


def reworded(
    source_goal: str, present_goal: str, seen: str, longest: int = 3, shared: float = 0.6
) -> dict[str, str] | None:
    """The words that differ between two goals of one template, phrase for phrase ("boil water" ->
    "boil lead": {"water": "lead"}; "the red box in the kitchen" -> "the orange box in the living
    room": {"red": "orange", "kitchen": "living room"}), or None when they are not one template:
    a word added or dropped, a phrase longer than `longest` words replaced, less than `shared` of
    the source goal's words in common, or a replaced phrase that names nothing in `seen` (the
    source episode's text: "boil water" -> "melt water" is another task, not another thing), but
    where two or more replaced phrases, and more than those that name nothing, name what was seen:
    "small flower size ... the unknown E plant ... the red box" -> "large leaf size ... the unknown
    D plant ... the green box" is one template whose trait no scene says. Unlike `bind_goals`, the
    things need not be what the source's actions act on: ScienceWorld's goals name substances and
    places its actions call otherwise ("substance in toilet")."""
    old, new = words(source_goal), words(present_goal)
    binding: dict[str, str] = {}
    same = 0
    unseen = 0
    for tag, i1, i2, j1, j2 in SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag == "equal":
            same += i2 - i1
        elif tag != "replace" or max(i2 - i1, j2 - j1) > longest:
            return None
        else:
            phrase = " ".join(old[i1:i2])
            unseen += not re.search(rf"\b{re.escape(phrase)}\b", seen)
            binding[phrase] = " ".join(new[j1:j2])
    if unseen and (len(binding) - unseen < 2 or len(binding) - unseen <= unseen):
        return None
    return binding if old and same >= shared * len(old) else None


def episode_rewording(episode: EpisodeRecord, goal: str) -> dict[str, str] | None:
    """`reworded` from a stored episode's goal to `goal`, with what the episode saw and did as the
    text a replaced phrase must name."""
    seen = {step.scene for step in episode.steps} | {step.action for step in episode.steps if step.action}
    return reworded(episode.read_as, goal, "\n".join(seen).lower())


def reword(action: str, binding: dict[str, str]) -> str:
    """The action with every whole phrase of `binding` replaced at once (no phrase is replaced twice)."""
    if not binding:
        return action
    phrases = sorted(binding, key=len, reverse=True)
    pattern = re.compile(r"\b(?:" + "|".join(re.escape(phrase) for phrase in phrases) + r")\b")
    return pattern.sub(lambda match: binding[match.group(0)], action)


def resolve(step: str, admissible: Sequence[str], names: Names, rebound: frozenset[str] = frozenset()) -> str | None:
    """The admissible action a plan step stands for now, or None.

    The step itself when admissible (case aside: a plan written from a scene's lower-cased names,
    "put remote in tv stand", is the game's "put remote in TV stand"); otherwise, for a step naming
    re-bound kinds, the one admissible action of the same shape in which those entities may carry
    other numbers. Ambiguity (two such actions) is None: the mediator then decides.
    """
    found = admitted(step, admissible)
    if found is not None:
        return found
    if not rebound:
        return None
    pattern = _shape(step, names, rebound)
    if pattern is None:
        return None
    matches = [action for action in admissible if pattern.fullmatch(action)]
    return matches[0] if len(matches) == 1 else None


def admitted(step: str, admissible: Sequence[str]) -> str | None:
    """The admissible action `step` is, as written or but for case; None when none is."""
    if step in admissible:
        return step
    lowered = step.lower()
    return next((action for action in admissible if action.lower() == lowered), None)


def _shape(step: str, names: Names, rebound: frozenset[str]) -> re.Pattern[str] | None:
    """A pattern for `step` with the numbers of re-bound entities free."""
    entities = [e for e in names.entities(step) if names.kind(e) in rebound]
    if not entities:
        return None
    pattern = re.escape(step)
    for entity in entities:
        kind = names.kind(entity)
        pattern = pattern.replace(re.escape(entity), re.escape(kind) + r"(?:\ \d+)?", 1)
    return re.compile(pattern)
