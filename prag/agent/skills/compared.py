"""A choice between things of a kind by a quantity each shows, measured alike and read the way
experience says.

"Focus on the inclined plane with the most friction": two things are called inclined planes, and
nothing in their names, nor in what the 1.5B model says (asked which of two planes a block slides
down slower on, it answers "slower" for more friction, less friction, a steeper and a shallower
angle alike), tells which. An experiment does: the same thing put on each (`Domain.put`), each
then looked at twice (`Domain.examine`), and what the looks read ("a steel block approximately 8%
down the plane") gives each its rate of change per step. Any thing the agent may pick up serves, the
same one for every candidate; one that shows no number is dropped for the next.

Which way a rate counts ("most friction" is the slower plane, "steepest angle" the faster) is
learned from experience (`orientations`): a stored episode that measured its candidates so and
then focused on one of them says, by whether the task went on or failed, which way its description
reads; and, by the description's degree word, which way its opposite reads ("least" for "most",
"shallowest" for "steepest": English, `POLARITY`). Training variations of the three inclined-plane
tasks ask the opposite of their test variations; the degree word carries the lesson over. Where
experience says nothing, the measurements decide nothing and the choice is left to the other
sources (prag.agent.skills.described).
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from prag.agent.skills.instructed import Target, is_a, targets, unqualified
from prag.envs.domain import Domain, filled
from prag.store.records import EpisodeRecord

# The degree words of English superlatives, +1 for more of the property, -1 for less.
POLARITY = {
    "most": 1, "least": -1, "greatest": 1, "fewest": -1, "highest": 1, "lowest": -1, "largest": 1, "smallest": -1,
    "biggest": 1, "longest": 1, "shortest": -1, "steepest": 1, "shallowest": -1, "fastest": 1, "slowest": -1,
    "heaviest": 1, "lightest": -1, "hottest": 1, "coldest": -1, "warmest": 1, "coolest": -1, "deepest": 1,
}
_SUPERLATIVE = re.compile(r"the (?P<head>.+?) (?:with|that has|which has) the (?P<degree>\w+) (?P<quality>.+)")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
# Readings of a candidate after a thing is put on it. Looks read whole percents: two planes' rates
# (4.7 and 4.35 % a step, inclined-plane-determine-angle dev variation 85) read alike over three
# readings (5, 9, 14 and 4, 9, 13) and apart over seven (5 ... 33 and 4 ... 30).
READS = 7
LOOKS = 10  # looks at it before it is given up (a thing at the top of a plane reads no number)


@dataclass(frozen=True)
class Comparative:
    """A description by a degree of a property: "the inclined plane with the most friction"."""

    head: str  # "inclined plane"
    degree: str  # "most"
    quality: str  # "friction"

    @property
    def polarity(self) -> int:
        return POLARITY[self.degree]

    @property
    def key(self) -> str:
        """What a lesson is about, whatever the degree: "inclined plane: friction"."""
        return f"{self.head}: {self.quality}"


def comparative(description: str | None) -> Comparative | None:
    """A description read as a degree of a property, None where it is not one."""
    match = _SUPERLATIVE.fullmatch(description or "")
    if match is None or match["degree"] not in POLARITY:
        return None
    return Comparative(match["head"], match["degree"], match["quality"])


Step = tuple[int, str | None, str]  # (t, action, what it led to)


def rates(steps: Sequence[Step], candidates: Iterable[str], domain: Domain) -> dict[str, float]:
    """Each candidate's rate of change per step, read from the looks at it (`Domain.examine`) since
    a thing was last put on it (`Domain.put`): the first number of each look's text (the names
    left out), from the first such reading to the last; candidates read fewer than `READS` times
    have none."""
    out: dict[str, float] = {}
    for candidate in candidates:
        readings = _readings(steps, candidate, domain)
        if len(readings) >= READS and readings[-1][0] != readings[0][0]:
            (t0, v0), (t1, v1) = readings[0], readings[-1]
            out[candidate] = (v1 - v0) / (t1 - t0)
    return out


def _readings(steps: Sequence[Step], candidate: str, domain: Domain) -> list[tuple[int, float]]:
    readings: list[tuple[int, float]] = []
    for t, action, text in steps:
        if action is None:
            continue
        placed = _put_on(action, domain)
        if placed is not None and placed[1] == candidate:
            readings = []
        elif action == _examine(domain, candidate):
            value = _value(text, candidate)
            if value is not None:
                readings.append((t, value))
    return readings


def _value(text: str, *names: str) -> float | None:
    text = text.lower()  # the actions' names are lower case, the text's may not be ("unknown material J")
    for name in names:
        text = text.replace(name, " ")
    found = _NUMBER.search(text)
    return float(found[0]) if found else None


def _examine(domain: Domain, thing: str) -> str | None:
    return domain.examine.format(thing=thing) if domain.examine is not None else None


def _put_on(action: str, domain: Domain) -> tuple[str, str] | None:
    """(thing, place) of a put action."""
    match = filled(domain.put, action)
    return (match["thing"], match["place"]) if match else None


def _examined(action: str, domain: Domain) -> str | None:
    match = filled(domain.examine, action)
    return match["thing"] if match else None


@dataclass
class Experiment:
    """One episode's measurement of the candidates of a comparative description, in their order."""

    candidates: list[str]
    domain: Domain
    useless: set[str] = field(default_factory=set)  # things put on a candidate that showed no number
    unmeasured: set[str] = field(default_factory=set)  # candidates read fewer than READS times in LOOKS looks

    def step(self, steps: Sequence[Step], admissible: Sequence[str]) -> str | None:
        """The next step of the experiment, None when every candidate was measured or nothing
        left can be tried (no thing may be put on them all, or none shows a number)."""
        measured = rates(steps, self.candidates, self.domain)
        for candidate in self.candidates:
            if candidate in measured or candidate in self.unmeasured:
                continue
            probe = self._on(steps, candidate)
            look = _examine(self.domain, candidate)
            if probe is not None and look in admissible:
                looks = [text for _, action, text in steps[probe[0] + 1:] if action == look]
                read = [value for value in (_value(text, candidate) for text in looks) if value is not None]
                if len(read) < READS and len(looks) < LOOKS:
                    return look
                if read:  # it read, but too slowly to tell a rate
                    self.unmeasured.add(candidate)
                    continue
                self.useless.add(probe[1])
            thing = self._probe(admissible)
            return None if thing is None else self._put(thing, candidate)
        return None

    def done(self, steps: Sequence[Step]) -> bool:
        """Whether every candidate was measured, or could not be."""
        return len(rates(steps, self.candidates, self.domain)) + len(self.unmeasured) >= len(self.candidates)

    def _on(self, steps: Sequence[Step], candidate: str) -> tuple[int, str] | None:
        """(index in steps, thing) of the last put of a thing on the candidate, while it stays."""
        found: tuple[int, str] | None = None
        for index, (_, action, _) in enumerate(steps):
            placed = _put_on(action, self.domain) if action else None
            if placed is not None and placed[1] == candidate:
                found = (index, placed[0])
            elif placed is not None and found is not None and placed[0] == found[1]:
                found = None  # moved on to another place
        return found if found is not None and found[1] not in self.useless else None

    def _probe(self, admissible: Sequence[str]) -> str | None:
        """The thing to put on every candidate: one that may be put on each of them and picked up
        (`Domain.readies`), not itself a candidate; a thing held first, then by name."""
        puts = [placed for placed in (_put_on(action, self.domain) for action in admissible) if placed is not None]
        puttable = [{thing for thing, place in puts if place == candidate} for candidate in self.candidates]
        things = set.intersection(*puttable) if puttable else set()
        movable = {thing for thing in things if any(f"{verb} {thing}" in admissible for verb in self.domain.readies)}
        usable = sorted(t for t in movable if t not in self.useless and not any(c in t for c in self.candidates))
        held = [thing for thing in usable if self.domain.held_by and thing.endswith(f" in {self.domain.held_by}")]
        return next(iter(held or usable), None)

    def _put(self, thing: str, candidate: str) -> str:
        assert self.domain.put is not None  # a probe is only found where the family can put
        return self.domain.put.format(thing=thing, place=candidate)

    def choice(self, steps: Sequence[Step], described: Comparative, orientation: int) -> str | None:
        """The candidate the description means, where experience says which way its rate counts
        (`orientation`: +1 where more of the property reads as a higher rate); None where not
        every candidate was measured or two rates tie."""
        measured = rates(steps, self.candidates, self.domain)
        if not orientation or len(measured) < len(self.candidates):
            return None
        sign = orientation * described.polarity
        best = max(sign * rate for rate in measured.values())
        top = [candidate for candidate, rate in measured.items() if sign * rate == best]
        return top[0] if len(top) == 1 else None


Orientations = dict[str, Counter[int]]  # Comparative.key -> +1/-1 -> episodes that say so


def orientations(episodes: Iterable[EpisodeRecord], domain: Domain) -> Orientations:
    """Which way each comparative description's rate counts, as stored episodes say: an episode
    that measured two or more candidates (`rates`) and then focused on one of them says, by the
    score (raised: it was the one; the task failed: it was not), the sign that makes the answer
    the highest: +1 where more of the property reads as the higher rate."""
    learned: Orientations = {}
    for episode in episodes:
        named = targets(episode.read_as, domain)
        steps = [(step.t, step.action, step.observation) for step in episode.steps]
        answered = 0
        for index, (before, after) in enumerate(zip(episode.steps, episode.steps[1:])):
            thing = domain.aimed_at(after.action) if after.action else None
            if thing is None or before.score is None or after.score is None or answered >= len(named):
                continue
            target: Target = named[answered]
            answered += 1
            described = comparative(target.description)
            verdict = -1 if after.score < 0 else 1 if after.score > before.score else 0
            if described is None or not verdict:
                continue
            candidates = _candidates(episode, described, thing, domain)
            measured = rates(steps[: index + 1], candidates, domain)
            if thing in measured and len(measured) >= 2:
                others = [rate for candidate, rate in measured.items() if candidate != thing]
                higher = 1 if all(measured[thing] > rate for rate in others) else -1 if all(
                    measured[thing] < rate for rate in others) else 0
                if higher:
                    learned.setdefault(described.key, Counter())[higher * verdict * described.polarity] += 1
    return learned


def _candidates(episode: EpisodeRecord, described: Comparative, focused: str, domain: Domain) -> set[str]:
    """The things an episode's looks were at whose names say they are what the description is."""
    looked = {_examined(step.action, domain) for step in episode.steps if step.action}
    return {focused} | {name for name in looked if name is not None and is_a(unqualified(name), described.head)}


def orientation(learned: Mapping[str, Counter[int]], described: Comparative) -> int:
    """The sign experience gives a description's rate (+1, -1), 0 where it says nothing or is split."""
    counts = learned.get(described.key, Counter())
    return 1 if counts[1] > counts[-1] else -1 if counts[-1] > counts[1] else 0
