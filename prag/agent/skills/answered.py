"""What experience says a described thing is, across variations and tasks.

A goal that describes its thing ("focus on the animal with the longest life span", "find a(n)
animal": prag.agent.skills.described) leaves a choice that a focus answers, and the family's score says
how it turned out: a focus that raised the score answered the description rightly, one after which
the task failed answered it wrongly. Stored episodes keep both, by the things' own names
(`Domain.name_of`: the "egg parrot" and the "baby baby parrot" of two variations are the parrot),
so a description answered in one variation is answered in the next without asking the LLM: the
parrot that outlived the ant in a training game of lifespan-longest-lived-then-shortest-lived is
the longest-lived where it is seen again, in a test variation of either lifespan task (their goals
use the same words). The 1.5B model named the wolf there.

The tally is wins minus failures, per description and own name. A description is relative ("the
longest life span" of the animals there), so a failure does not rule a thing out where it also won.

Where no thing answered before is seen (another variation shows other animals), what the right
answers were like still narrows the choice (`likeness`): the states the scene gave them ("the
crocodile is alive") and the room they were found in ("outside"). A person's correction of one
variation of find-animal focused on a butterfly outside; in the next variation the question is
asked first outside, among the things there that are alive, not among the workshop's wires.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from typing import TypeVar

from prag.agent.skills.instructed import Target, targets
from prag.envs.domain import Domain
from prag.store.records import EpisodeRecord, StepRecord

Tally = dict[str, Counter[str]]  # description -> own name -> wins minus failures
K = TypeVar("K")
STATE, ROOM = "is ", "in "  # a likeness feature: "is alive", "in outside"


def answers(episodes: Iterable[EpisodeRecord], domain: Domain) -> Tally:
    """The descriptions the episodes' irrevocable steps answered, and how: the k-th irrevocable
    step of an episode answers the k-th thing its goal's instructions name (`targets`), where
    that one is described; it counts +1 where it raised the score, -1 where the task failed."""
    tally: Tally = {}
    for description, thing, before, verdict in _answered(episodes, domain):
        own = domain.name_of(thing, before.triples).lower()
        tally.setdefault(description, Counter())[own] += verdict
    return tally


def likeness(episodes: Iterable[EpisodeRecord], domain: Domain) -> Tally:
    """What the right answers to each description were like: description -> feature -> how many
    right answers had it, a feature being a state the scene gave the thing when it was answered
    (`STATE` + "alive") or the room the agent answered it in (`ROOM` + "outside")."""
    tally: Tally = {}
    for description, thing, before, verdict in _answered(episodes, domain):
        if verdict > 0:
            states = {STATE + o for s, r, o in before.triples if s == thing and r == "is"}
            tally.setdefault(description, Counter()).update({*states, *([ROOM + before.location] if before.location else [])})
    return tally


def _answered(episodes: Iterable[EpisodeRecord], domain: Domain) -> Iterator[tuple[str, str, StepRecord, int]]:
    """(description, the thing, the step before, +1 right or -1 wrong) for each irrevocable step
    that answered a described instruction and moved the score."""
    for episode in episodes:
        named = targets(episode.read_as, domain)
        answered = 0
        for before, after in zip(episode.steps, episode.steps[1:]):
            thing = domain.aimed_at(after.action) if after.action else None
            if thing is None or before.score is None or after.score is None:
                continue
            if answered >= len(named):
                break
            target: Target = named[answered]
            answered += 1
            if target.description is None:
                continue
            verdict = -1 if after.score < 0 else 1 if after.score > before.score else 0
            if verdict:
                yield target.description, thing, before, verdict


def merge(into: dict[str, Counter[K]], more: Mapping[str, Counter[K]]) -> None:
    """`more`'s counts added to `into`'s."""
    for description, counts in more.items():
        into.setdefault(description, Counter()).update(counts)
