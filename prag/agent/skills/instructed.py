"""The irrevocable steps a goal spells out: ScienceWorld's "First, focus on the thermometer. Next,
focus on the chocolate." The family declares which actions are irrevocable (`Domain.irrevocable`,
group `x` the thing); the goal's sentences that say one, unconditionally, name its things in order.

A thing so named is acted on once it is in view: the admissible irrevocable action on a thing whose
own name is the named one (`Domain.name_of`: "thermometer in inventory" is the thermometer,
"substance in toilet" is water). A sentence that makes the step conditional ("If it is above 150
degrees, focus on the yellow box") is no instruction to take it: that is left to the other
sources. The next named thing waits for the one before.

An instruction may name its thing by a word for what the task is about ("Your task is to boil
gallium. First, focus on the substance."): when no instruction names the thing the goal's first
clause ends with, the one instruction whose words that clause does not use refers to it, as a
pronoun would (with two, which is meant is left open), and is taken on a thing whose own name ends
that clause (gallium; "orange juice" in "boil orange juice"). That is the thing
prag.agent.skills.irrevocable already lets any source act on; a word the clause shares ("focus on the
sodium chloride" after "determine if sodium chloride is conductive") names a thing of its own.
An instruction naming its thing with an indefinite article ("First, focus on a seed") means any thing
of that kind (a peach seed). Where the clause ends in an indefinite phrase ("find a(n) plant"), it
names a kind, not a thing:
the instruction that refers to it ("the thing", its last word, or words the clause does not use)
is taken on any thing whose name ends in that phrase, as English names a kind of a kind ("pea
plant"; "living thing in flower pot 6", by the words the actions use for it without where it is).
An instruction naming what is meant of a thing ("focus on the 4 life stages of the dove, starting
from earliest to latest") names that thing as it is at each: any thing whose name ends in it (the
"egg dove", later the "hatchling dove"); the words after a comma say how, not what. Its stages
are focused as they come, as many as the words say: once one was, the thing is watched (the
family's `examine`: time passes) until it is called otherwise (`Instructed.awaited`).

What the words leave open, experience reads (`verified_focuses`): where a stored episode of this
goal's template took an irrevocable step that raised the family's score, the thing it was aimed at
is a verified reading of that instruction. Its name in the source goal, re-worded to this one
("boil water": "focus on the substance" was water, so in "boil lead" it is lead), replaces the
instruction's words at the same place, when it is what this goal's words allow (the target check
of prag.agent.skills.irrevocable: a conditional box is never taken this way).
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from prag.agent.plans import episode_rewording, reword, words
from prag.envs.base import Observation, Triple
from prag.envs.domain import Domain
from prag.retrieval.episodes import Experience
from prag.store.records import EpisodeRecord
from prag.text import without_article

_LEAD = re.compile(r"^\w+,\s*")  # "first, ", "next, ", "then, "
_INDEFINITE = re.compile(r"^an?\s+")
# "... find a(n) living thing": an indefinite noun phrase ending the clause ("grow a peach plant
# from seed" ends in no noun phrase: the plant is grown from it).
# "the animal with the longest life span": a description, not a name.
_QUALIFIED = re.compile(r"\s(?:with|that|which|whose)\s")
_LABEL = re.compile(r"\s(?:\w|\d+)$")
_MADE = re.compile(r"(?P<what>.+?) you (?:created|made)")
_QUOTED_END = re.compile(r"'(?P<name>[^']+)'$")
# "the 4 life stages of the dove, starting from earliest to latest": what is meant of a thing (its
# stages, its parts), each of which is that thing as it is then (an "egg dove", later a "hatchling
# dove"); the words after a comma say how, not what.
_OF_A_THING = re.compile(
    r"^(?:(?P<count>\d+)\s+)?(?:[\w-]+\s)*[\w-]+s of (?:the\s+|an?\s+)?(?P<thing>[\w-]+(?:\s[\w-]+)*?)(?:,.*)?$")
# How many steps a thing whose stages are focused is watched, unchanged, for its next stage.
STAGE_WAITS = 30
_KIND = re.compile(r"(?:^|\s)(?:a|an|a\(n\))\s+(?P<kind>(?:(?!(?:from|of|in|on|to|with|into|for|by|at)\b)[\w-]+\s?)+)$")


@dataclass(frozen=True)
class Target:
    """The thing an instruction names: by its own name (`words`), or, where the instruction's
    words refer to what the task is about, any thing whose name ends the goal's first clause
    (`about`; `words` is then the clause's last word, for find-X to seek), or, where that clause
    ends in a kind (`kind`: "a(n) plant"), any thing whose name ends in `words`, the kind.
    `chosen`: the words are a thing's name as chosen for a description, whatever they say
    ("inclined plane with a cloth surface")."""

    words: str
    about: str | None = None
    kind: bool = False
    chosen: bool = False
    made: bool = False  # "the intermediate (secondary color) paint you created": a thing of kind `words` made here
    # "the 4 life stages of the dove": each what `words` names as it is then (an "egg dove"), by
    # its name; nothing a description is asked for, where nothing is called so.
    stages: bool = False
    count: int | None = None  # of the stages: how many the words say there are

    @property
    def description(self) -> str | None:
        """How the LLM is asked for the thing (prag.agent.skills.described) where the words describe it
        rather than name it: a kind ("a(n) animal"), or a phrase qualified by what it is like
        ("the animal with the longest life span"); None for a name."""
        if self.kind:
            return None if self.stages else f"a(n) {self.words}"
        if self.chosen or self.made or self.about is not None:
            return None
        return f"the {self.words}" if _QUALIFIED.search(self.words) else None

    @property
    def head(self) -> str:
        """What the thing is, its qualifier left out: "inclined plane" of "the inclined plane
        with the most friction"; a kind itself."""
        return self.words if self.kind else unqualified(self.words)

    def called(self, names: set[str]) -> bool:
        if self.kind:
            return any(is_a(name, self.words) for name in names)
        if self.about is None:
            return self.words in names
        return _ends(self.about, names)


def instructed(goal: str, domain: Domain) -> list[str]:
    """The things the goal's unconditional irrevocable instructions name, in their order."""
    return [target.words for target in targets(goal, domain)]


def targets(goal: str, domain: Domain) -> tuple[Target, ...]:
    """What the goal's unconditional irrevocable instructions name, in their order."""
    return _targets(goal, domain.irrevocable)[0]


@lru_cache(maxsize=256)
def _targets(goal: str, irrevocable: str | None) -> tuple[tuple[Target, ...], str]:
    """What the goal's unconditional instructions name, in order, and its first clause, read
    once a goal (they are asked of every irrevocable action offered, every step)."""
    named: list[str] = []
    indefinite: set[int] = set()  # "focus on a seed": any thing of the kind
    stages: dict[int, int | None] = {}  # "focus on the 4 life stages of the dove": the dove, whatever it is called at each
    if irrevocable is not None:
        # The instruction may follow other words of its sentence ("When you are done, focus on ...").
        pattern = re.compile(rf"(?:^|(?<=\s))(?:{irrevocable})$")
        for sentence in instructions(goal):
            match = pattern.search(sentence)
            if match is not None:
                named_so = without_article(match["x"])
                of_a_thing = _OF_A_THING.match(named_so)
                if _INDEFINITE.match(match["x"]):
                    indefinite.add(len(named))
                if of_a_thing is not None:
                    stages[len(named)] = int(of_a_thing["count"]) if of_a_thing["count"] else None
                named.append(of_a_thing["thing"] if of_a_thing is not None else named_so)
    # The goal's first clause, whose last words name what the task is about ("your task is to
    # boil gallium", "... to measure the temperature of unknown substance b").
    first = re.split(r"[.,;!?]", " ".join(goal.lower().split()), maxsplit=1)[0].strip()
    quoted = _QUOTED_END.search(first)  # "create the substance 'sugar water'": a whole name, kept in quotes
    about = " ".join(first[: quoted.start() if quoted else None].replace("'", " ").split()
                     + ([quoted[0]] if quoted else []))
    targets = [Target(name, kind=True, stages=i in stages, count=stages.get(i)) if i in indefinite | set(stages)
               else _target(name, about) for i, name in enumerate(named)]
    said = set(re.findall(r"\w+", about))
    kind = _KIND.search(about)
    if kind is not None:  # "find a(n) living thing. First, focus on the thing."
        head = kind["kind"].split()[-1]
        referring = [i for i, name in enumerate(named) if name == head or not set(re.findall(r"\w+", name)) & said]
        if len(referring) == 1:
            targets[referring[0]] = Target(kind["kind"], kind=True)
    elif about and not _ends(about, set(named)):
        unsaid = [i for i, name in enumerate(named) if not set(re.findall(r"\w+", name)) & said]
        if len(unsaid) == 1:  # with two ("the thermometer", "the substance"), which is meant is open
            targets[unsaid[0]] = Target(re.findall(r"[\w-]+", about)[-1], about)
    return tuple(targets), about


def _target(name: str, clause: str) -> Target:
    """A thing an instruction names; "the ... paint you created" is one made in the episode. A name
    that the thing the goal's first clause ends with ends after a hyphen is that thing: "focus on
    the violet paint" after "create blue-violet paint" (a blue-violet paint is a violet paint)."""
    made = _MADE.fullmatch(name)
    if made:
        return Target(made["what"].split()[-1], made=True)
    tokens = clause.split()
    longer = " ".join(tokens[-len(name.split()):])
    return Target(longer if longer.endswith(f"-{name}") else name)


def instructions(goal: str) -> list[str]:
    """The goal's sentences, lower-cased and without their lead ("first, ", "then, "), but for
    those that make what they say conditional ("If it is above 50 degrees, focus on ..."): no
    instruction to do it now (prag.agent.skills.conditions decides those)."""
    return [sentence for sentence in sentences(goal) if not conditional(sentence)]


def sentences(goal: str) -> list[str]:
    """The goal's sentences, lower-cased and without their lead ("first, ", "then, ")."""
    return [_LEAD.sub("", sentence.strip().rstrip(".!?;"))
            for sentence in re.split(r"(?<=[.!?;])\s+", " ".join(goal.lower().split()))]


def conditional(sentence: str) -> bool:
    return sentence.startswith("if ") or " if " in sentence


def is_a(name: str, kind: str) -> bool:
    """Whether a name names a thing of `kind`, as English names a kind of a kind: "pea plant" is a
    plant, "blue box" a box; "planter" is not."""
    return name == kind or name.endswith(f" {kind}")


def unqualified(name: str) -> str:
    """A name or a phrase without what qualifies it: "inclined plane" of "inclined plane with a
    iron surface", and of "inclined plane j" (a label: one letter, or a number)."""
    return _LABEL.sub("", _QUALIFIED.split(name, maxsplit=1)[0])


def _ends(about: str, names: set[str]) -> bool:
    # Whole words after a space: "living thing" does not end "find a(n) non-living thing". A name
    # in quotes is whole: "water" is not the 'sugar water' the task makes (a focus on the toilet's
    # water, taken for its target, failed chemistry-mix).
    quoted = _QUOTED_END.search(about)
    if quoted is not None:
        return any(is_a(name, quoted["name"]) for name in names if name)
    return any(is_a(about, name) for name in names if name)


def names(thing: str, domain: Domain, triples: Sequence[Triple]) -> set[str]:
    """What a thing is called, in lower case as the goal is read: the action's words for it, and
    its own name (`Domain.name_of`: "thermometer in inventory" is the thermometer, "substance in
    toilet" is water)."""
    return {thing.lower(), domain.name_of(thing, triples).lower()}


def names_the_target(goal: str, domain: Domain, called: set[str]) -> bool:
    """Whether a thing `called` so (`names`) is what the goal's irrevocable instructions name, or
    what the task is about: the words "First, focus on the substance" mean after "Your task is to
    boil gallium." A word the goal uses for anything else ("the orange box", "around the kitchen")
    is not."""
    named, about = _targets(goal, domain.irrevocable)
    return any(target.called(called) for target in named) or _ends(about, called)


class Instructed:
    """The goal's instructed irrevocable steps in one episode, and which were taken."""

    def __init__(self, goal: str, domain: Domain) -> None:
        self.domain = domain
        self.left = list(targets(goal, domain))
        self.about = _targets(goal, domain.irrevocable)[1]  # the goal's first clause: what the task is about
        self._offered: dict[str, Target] = {}  # action -> the named thing it acts on
        self._heeded = False
        self.made: set[str] = set()  # what the episode made (prag.agent.skills.making), by own name

    def heed(self, verified: Sequence[str]) -> None:
        """Experience's verified readings (`verified_focuses`), once an episode before the first
        step is taken: the k-th replaces the k-th instruction's words, the rest follow them."""
        if self._heeded:
            return
        self._heeded = True
        self.left = [Target(name) for name in verified] + self.left[len(verified):]

    @property
    def described(self) -> Target | None:
        """The next instruction's thing, where its words describe it (`Target.description`)."""
        return self.left[0] if self.left and self.left[0].description is not None else None

    def instruct(self, sentence: str) -> bool:
        """Take `sentence` (a conditional branch decided: prag.agent.skills.conditions, "focus on the
        purple box") as the next instruction, where it says an irrevocable step; whether it does."""
        match = re.fullmatch(self.domain.irrevocable, sentence) if self.domain.irrevocable is not None else None
        if match is not None:
            self.left.append(Target(without_article(match["x"]), chosen=True))
        return match is not None

    def by_its_name(self, seen: set[str]) -> bool:
        """Where the next instruction names its thing by a word before a name ("the grown orange")
        and nothing anywhere is called so: it means the thing called by that name ("orange"), as
        the goal's "electric buzzer" is the scene's "buzzer". Not a thing the task is about, named
        whole ("create the substance 'sugar water'": the water is not it). Whether it was so re-read."""
        target = self.left[0] if self.left else None
        if target is None or target.kind or target.chosen or target.made or target.about is not None \
                or re.search(rf"\b{re.escape(target.words)}\b", self.about):
            return False
        words = target.words.split()
        if len(words) != 2 or words[1] not in seen or _QUALIFIED.search(f" {target.words} "):
            return False
        self.left[0] = Target(words[1])
        return True

    def mean(self, thing: str) -> None:
        """The next instruction means `thing` (as the LLM chose it for its description)."""
        self.left[0] = Target(thing, chosen=True)

    @property
    def next(self) -> str | None:
        """The thing the next instruction names; None when none is left."""
        return self.left[0].words if self.left else None

    def step(self, observation: Observation, taken: Sequence[str | None]) -> str | None:
        """The admissible action the next instruction calls for now; None while its thing is not in view."""
        while self.left and (self._staged(taken) if self.left[0].stages
                             else any(self._offered.get(action or "") == self.left[0] for action in taken)):
            self.left.pop(0)
        if not self.left:
            return None
        target = self.left[0]
        marked = set(self.domain.marked_things(observation.scene_triples))
        aimed = {self.domain.aimed_at(action) for action in taken if action} if target.stages else set()
        for action in observation.admissible:
            thing = self.domain.aimed_at(action)
            # A second focus on a thing fails the task; not on one called otherwise since (the
            # mark stays on the egg focused, a hatchling now: its next stage).
            if thing is None or (thing in aimed if target.stages else thing in marked):
                continue
            called = names(thing, self.domain, observation.scene_triples)
            if target.made:  # what the episode made of the kind, by its own name
                if any(is_a(name, target.words) and name in self.made for name in called):
                    self._offered[action] = target
                    return action
                continue
            if target.kind:  # "living thing in flower pot 6" is a living thing, whatever its own name
                called.add(self.domain.name_of(thing, ()).lower())
            if target.called(called):
                self._offered[action] = target
                return action
        return None

    def _staged(self, taken: Sequence[str | None]) -> bool:
        """Whether the stages the next instruction names were all focused, by whichever source: as
        many as its words say; where they say none, one (a person's correction, followed, takes the
        rest as they come: prag.agent.sources.progress_plans); or none came for `STAGE_WAITS` steps."""
        target = self.left[0]
        focused = self._stage_focuses(taken)
        if not focused:
            return False
        return len(focused) >= (target.count or 1) or len(taken) - 1 - focused[-1] > STAGE_WAITS

    def _stage_focuses(self, taken: Sequence[str | None]) -> list[int]:
        """Where in `taken` an irrevocable step was taken: a stage focused, whatever it was called
        (the person's "seed" of the goal's "pear plant")."""
        return [i for i, action in enumerate(taken) if self.domain.aimed_at(action or "") is not None]

    def awaited(self, observation: Observation, taken: Sequence[str | None]) -> str | None:
        """Where a stage of the next instruction's thing was focused and it is in view as it was
        then: the family's action that shows it as it is now (`Domain.examine`), time passing
        until it is called otherwise (its next stage: `step` focuses it). None where no stage was
        focused, the thing focused is not what the words name (a person's "pear seed" for the
        goal's "pear plant": their route grows it), or the family shows no thing. Before any
        route of a stored episode: replayed, a won episode's steps between its stages took the
        caterpillar away, and its next stage was missed."""
        target = self.left[0] if self.left else None
        if target is None or not target.stages or self.domain.examine is None:
            return None
        focused = self._stage_focuses(taken)
        thing = self.domain.aimed_at(taken[focused[-1]] or "") if focused else None
        look = self.domain.examine.format(thing=thing) if thing else None
        if thing is None or look not in observation.admissible:
            return None
        return look if target.called(names(thing, self.domain, observation.scene_triples)) else None


def verified_focuses(goal: str, experiences: Sequence[Experience], domain: Domain) -> list[str]:
    """The things experience says this goal's instructions mean, in order: from the retrieved
    episode of this goal's template (`prag.agent.plans.reworded`) whose irrevocable steps raised
    its score the most, each such step's thing by its name in that episode's goal, re-worded to
    this goal, while this goal's words allow it (`names_the_target`). [] when none did."""
    best: tuple[float, list[str]] = (0.0, [])
    for experience in experiences:
        gained, things = _focuses_that_scored(experience.episode, goal, domain)
        if gained > best[0]:
            best = (gained, things)
    return best[1]


def _focuses_that_scored(episode: EpisodeRecord, goal: str, domain: Domain) -> tuple[float, list[str]]:
    source_goal = f" {' '.join(words(episode.read_as))} "
    binding: dict[str, str] | None = None
    gained, things = 0.0, []
    for before, after in zip(episode.steps, episode.steps[1:]):
        thing = domain.aimed_at(after.action) if after.action else None
        if thing is None or before.score is None or after.score is None or after.score <= before.score:
            continue
        named = [name for name in names(thing, domain, after.triples) if f" {name} " in source_goal]
        if named and binding is None:
            binding = episode_rewording(episode, goal)
        present = reword(named[0], binding) if named and binding is not None else None
        if present is None or not names_the_target(goal, domain, {present}):
            break  # the readings after it wait for it, as the instructions do
        gained += after.score - before.score
        things.append(present)
    return gained, things
