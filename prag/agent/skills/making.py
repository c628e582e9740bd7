"""A thing the goal names that is nowhere in the house: made, by combining things of its kind.

"Your task is to use chemistry to create violet paint. When you are done, focus on the violet
paint.": find-X searches every place and no thing is violet paint. What the family says of its
interface is how things are combined (`Domain.combine`, ScienceWorld's "mix {thing}": what a
vessel holds becomes something else) and how one thing goes into another (`Domain.put`,
`Domain.pour`). Which things make it, the family does not say, nor does the 1.5B model know (asked
which two of red, blue and yellow paint make violet, green or orange, it answers "red paint and
blue paint" to all three). So:

- **learned recipes**: a combination seen in a stored episode, or earlier in this one, is a recipe
  (`recipes`: the things by their own names that were gone after it, and those that were new). A
  recipe for the thing is followed; a pair known to make something else is not tried for it;
- **parts named**: a name joined by a hyphen names its parts ("blue-violet paint": blue paint and
  violet paint); a part that is nowhere is made first, the same way;
- **trying**: otherwise two things of its kind (its last word: "paint") are put together and
  combined, those whose names share the most words with the thing first. What they make is learnt
  either way: a wrong pair is the recipe of something else, which the next round, and the next
  variation, knows.

"the intermediate (secondary color) paint you created" is read as a thing of that kind made in
this episode (prag.agent.skills.instructed).
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import combinations

from prag.agent.skills.instructed import is_a
from prag.agent.world.state import Recipe
from prag.envs.base import Triple
from prag.envs.domain import Domain, filled


def own_names(triples: Iterable[Triple], domain: Domain) -> Counter[str]:
    """The own names (`Domain.name_of`) of the things a scene places somewhere, counted (two cups
    of blue paint in a room)."""
    listed = list(triples)
    return Counter(domain.name_of(s, listed).lower() for s, r, o in listed if domain.placement.get(r) is not None)


def recipes(scenes: Sequence[tuple[str | None, Sequence[Triple]]], domain: Domain) -> list[Recipe]:
    """The recipes a run of (action, the scene's triples after it) shows: at each combining action
    (`Domain.combine`) that changed what is there, what was gone and what was new."""
    found = []
    for (_, before), (action, after) in zip(scenes, scenes[1:]):
        if action is None or filled(domain.combine, action) is None:
            continue
        was, now = own_names(before, domain), own_names(after, domain)
        if was - now and now - was:
            found.append(Recipe(frozenset(was - now), frozenset(now - was)))  # what a count fell and rose of
    return found


def made(scenes: Sequence[tuple[str | None, Sequence[Triple]]], domain: Domain) -> list[str]:
    """What this episode's combinations made, in order (own names)."""
    return [name for recipe in recipes(scenes, domain) for name in sorted(recipe.outputs)]


@dataclass
class Making:
    """One episode's making of a thing: which pairs it put together."""

    domain: Domain
    tried: set[frozenset[str]] = field(default_factory=set)

    def step(self, wanted: str, triples: Sequence[Triple], admissible: Sequence[str], known: Sequence[Recipe],
             made_here: Collection[str] = ()) -> str | None:
        """The next step towards `wanted` (an own name, "violet paint"): combine a vessel holding
        two or more things of its kind, else put one thing of a chosen pair into the other's
        vessel; None where nothing can be tried here."""
        head = wanted.split()[-1]
        where = {s: o for s, r, o in triples if self.domain.placement.get(r) is not None}
        have: dict[str, str] = {}  # own name -> the thing, for things of the kind held in a vessel here
        for thing, holder in where.items():
            own = self.domain.name_of(thing, triples).lower()
            # A thing standing in the room is no ingredient: two boxes are not poured together.
            if is_a(own, head) and own != wanted and holder in where:
                have.setdefault(own, thing)
        mixed = [vessel for vessel in set(where.values())
                 if len({self.domain.name_of(t, triples).lower() for t, v in where.items() if v == vessel} & set(have)) >= 2]
        for vessel in sorted(mixed):
            action = self.domain.combine.format(thing=vessel) if self.domain.combine else None
            if action in admissible:
                return action
        pair = self._pair(wanted, set(have), known, set(made_here))
        if pair is None:
            return None
        first, second = sorted(pair)
        vessel, other = where[have[first]], where[have[second]]
        # The other's vessel poured first: its name says what it holds, where the thing's own words
        # may be ambiguous ("paint on cup"); a put moves a thing, not a vessel's contents.
        tries = [(self.domain.pour, other), (self.domain.pour, have[second]), (self.domain.put, have[second])]
        for template, thing in tries:
            action = template.format(thing=thing, place=vessel) if template else None
            if action in admissible and thing != vessel:
                self.tried.add(pair)
                return action
        return None

    def _pair(self, wanted: str, have: set[str], known: Sequence[Recipe], made_here: set[str]) -> frozenset[str] | None:
        """The two things (own names) to put together next for `wanted`: a recipe's, its parts, else
        an untried pair of things not made here (what a wrong pair made is no ingredient to try)."""
        for recipe in known:
            if wanted in recipe.outputs and recipe.inputs <= have and len(recipe.inputs) == 2:
                return recipe.inputs
        parts = named_parts(wanted)
        if len(parts) == 2:
            missing = [part for part in parts if part not in have]
            if not missing:
                return frozenset(parts)
            if len(missing) == 1:
                return self._pair(missing[0], have, known, made_here)
        elsewhere = {recipe.inputs for recipe in known if wanted not in recipe.outputs}
        said = set(_words(wanted))
        pairs = [frozenset(pair) for pair in combinations(sorted(have - made_here), 2)]
        fresh = [pair for pair in pairs if pair not in self.tried and pair not in elsewhere]
        fresh.sort(key=lambda pair: -len(said & {w for name in pair for w in _words(name)}))
        return fresh[0] if fresh else None


def named_parts(name: str) -> list[str]:
    """The parts a hyphenated name names, with its last word: "blue-violet paint" is made of blue
    paint and violet paint; [name] for a name of one part."""
    head = name.split()[-1]
    return [f"{word} {head}" for word in name[: -len(head)].strip().split("-") if word] or [name]


def _words(name: str) -> list[str]:
    return re.findall(r"[a-z]+", name.lower())
