"""A thing the goal describes rather than names, chosen by the LLM among the things seen.

"Find a(n) animal. First, focus on the thing": no thing's name says it is an animal ("dove",
"wolf"). "Focus on the animal with the longest life span": no thing is called that. What the
words cannot settle, the LLM's knowledge may: once find-X has searched every place for the
words and found nothing so called, the LLM is asked, room by room, "Which one of them is a(n)
animal?" among the things seen there, with "none" allowed, under a constraint (one of those
names), each shown with the states the scene gives it ("moth (alive)"). The first room it names
a thing in gives the thing the instruction means, where the description is a kind ("a(n) living
thing") once the LLM, asked "Is the moth (alive) a(n) living thing?", says yes; the rooms the goal
mentions ("The animals are in the 'outside' location") are asked first, the others in the order
they were first seen, and the things the goal names ("move it to the purple box") last.

A kind is asked only after the words failed in every room: asked first, the 1.5B model named a
wrong thing for "a(n) living thing" in 11 of 20 rooms, where the words name it ("living thing in
flower pot 6"); for "a(n) animal" in 1 of 20, with the goal's own text in the question in 4 of
10 ("sink" in a bathroom): the question shows the room's things alone. With their states shown
and its answer confirmed, it named a wrong living thing in 1 of 20 rooms, a wrong animal or plant
in none (benchmarks/kind_questions.py --states --verify). A focus is irrevocable, so a wrong answer loses the task; a
thing already chosen is not offered again, nor one a focus on which failed this very task in an
earlier round (prag.agent.sources.past_episodes.fatal_things): round after round, the candidates left narrow
(the other of two inclined planes). Where experience answered the description in another
variation, with things not seen here, the question goes first to the rooms its answers were found
in and offers only the things that share their states (prag.agent.skills.answered.likeness: a
crocodile that was alive, outside, makes the question about the living things outside, not about
the fire pit and the axe beside them). Each question is one LLM call, counted in the LLM
budget, and asked past it as a goal's reading is (`--llm-budget` bounds the steps the LLM
chooses): at most one a room for each description, where the model says "none" in most rooms.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from prag.agent.goals.subgoals import mentions
from prag.agent.protocol import Usage
from prag.agent.skills.answered import ROOM, STATE
from prag.agent.skills.instructed import is_a, unqualified
from prag.agent.world.observed import Observed
from prag.llm import LLM, Message

NONE = "none"
_INDEFINITE = re.compile(r"an?\b|a\(n\)", re.IGNORECASE)  # "a(n) animal", "an animal": a kind, not one thing
_SYSTEM = "You know what kinds of thing there are in the world."


@dataclass
class DescribedThings:
    """The LLM's choices of described things in one episode."""

    llm: LLM
    usage: Usage
    seed: int = 0
    asked: set[tuple[str, str]] = field(default_factory=set)  # (description, room)
    chosen: list[str] = field(default_factory=list)

    def choose(self, description: str, head: str, goal: str, observed: Observed,
               ruled_out: Collection[str] = (), known: Mapping[str, int] | None = None,
               alike: Mapping[str, int] | None = None) -> str | None:
        """The thing seen that the LLM says `description` ("a(n) animal", "the animal with the
        longest life span") is, asking the rooms not yet asked about it; None when it names none.
        Where things seen are called what it is (`head`: "inclined plane j", "inclined plane
        with a iron surface" for "the inclined plane with the most friction"), it is one of
        them: the LLM is asked once which, with no "none" (and not at all where one is left).
        Things `ruled_out` (a focus on them failed this very task before) are not offered.
        Where experience answered the description (`known`: own name -> wins minus failures,
        prag.agent.skills.answered), the thing seen with the most wins is taken with no question (the
        LLM asked among those tied, where they are not all one by their own name), and one with
        more failures than wins is not offered; else what its right answers were like (`alike`:
        feature -> count, `likeness`) orders the rooms and narrows the things offered."""
        rooms = things_by_room(observed)
        passed = {*self.chosen, *ruled_out}

        def own(thing: str) -> str:
            return observed.own_names.get(thing, thing)

        def shown(things: Iterable[str]) -> dict[str, tuple[str, str]]:
            """Each thing -> (the name it is asked by, that name with its states): its own name where
            no other thing offered has it ("parrot" for "egg parrot": asked which of "baby wolf
            (alive), egg chameleon (alive), egg parrot (alive)" lives longest, the 1.5B model said
            none; of "wolf, chameleon, parrot", the parrot)."""
            things = list(things)
            owns = Counter(own(thing) for thing in things)
            said = {thing: own(thing) if owns[own(thing)] == 1 else thing for thing in things}
            return {thing: (said[thing], _with_states(said[thing], observed.states.get(thing, ()))) for thing in things}

        def may_offer(thing: str) -> bool:  # by its own name too: a round later the wolf is younger
            return thing not in passed and own(thing) not in passed
        if known:
            seen = [thing for things in rooms.values() for thing in things if may_offer(thing)]
            tally = {thing: known.get(own(thing).lower(), 0) for thing in seen}
            best = max(tally.values(), default=0)
            if best > 0:
                tied = [thing for thing in seen if tally[thing] == best]
                one = len({own(thing) for thing in tied}) == 1  # an egg and a hatchling of the parrot
                answer = tied[0] if one else self._ask(description, "seen", shown(tied), False)
                if answer is not None:
                    self.chosen.append(answer)
                    return answer
            passed |= {thing for thing, count in tally.items() if count < 0}
        of_kind = [thing for thing in called(head, rooms) if may_offer(thing)]
        if of_kind:
            asked: list[tuple[str, list[str], bool]] = [("seen", of_kind, False)]
        else:
            # Among the things like the right answers, in a room they were found in, one is meant: no "none".
            like = alike or {}
            fits = _fitting(like, observed, [t for things in rooms.values() for t in things if may_offer(t)])
            # What the goal's words name is asked about last: "move it to the purple box in the living
            # room" names where the living thing goes, and the 1.5B model, asked about the living
            # room first, named the box.
            said = _plain(goal)
            named = [t for things in rooms.values() for t in things if mentions(said, t.lower())]
            asked = [(f"in the {room}", [t for t in things if t not in named and (fits is None or fits(t))],
                      fits is None or not like.get(ROOM + room))
                     for room, things in rooms_first_named(goal, rooms, alike)]
            asked.append(("the task names", named, True))
        for where, things, none in asked:
            offered = [thing for thing in things if may_offer(thing)]
            if (description, where) in self.asked or not offered:
                continue
            self.asked.add((description, where))
            asked_as = shown(offered)
            answer = offered[0] if len(offered) == 1 and not none else self._ask(description, where, asked_as, none)
            if answer is not None and none and not self._confirmed(asked_as[answer][1], description):
                answer = None
            if answer is not None:
                self.chosen.append(answer)
                return answer
        return None

    def _ask(self, description: str, where: str, shown: Mapping[str, tuple[str, str]], none: bool) -> str | None:
        """The thing the LLM names among `shown` (thing -> the name it is asked by, with its states)."""
        question = f"Things {where}: {', '.join(with_states for _, with_states in shown.values())}.\n" \
                   f"Which one of them is {description}? Answer with its name"
        said = {name.lower(): thing for thing, (name, _) in shown.items()}
        choices = [*said, NONE] if none and NONE not in said else list(said)
        answer = self._complete(f"{question}, or {NONE}." if none else f"{question}.", choices)
        return said.get(answer)

    def _confirmed(self, shown: str, description: str) -> bool:
        """Whether the LLM says yes, asked if the thing it named is of the kind `description`
        names ("a(n) living thing"); a description of one thing ("the animal with the longest life
        span") is not asked so. Asked about a room with no living thing in it, the 1.5B model named
        the sink a living thing, and then said no, it is not (benchmarks/kind_questions.py --verify)."""
        if not _INDEFINITE.match(description):
            return True
        return self._complete(f"Is the {shown} {description}? Answer yes or no.", ["yes", "no"]) == "yes"

    def _complete(self, question: str, choices: Sequence[str]) -> str:
        messages: list[Message] = [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": question}]
        completion = self.llm.complete(messages, choices=list(choices), max_tokens=16, seed=self.seed)
        self.usage.add(completion)
        return completion.text.strip().rstrip(".").lower()  # read as words, never evaluated


def _with_states(thing: str, states: Iterable[str]) -> str:
    """The thing as a question shows it: with the states the scene gives it, "moth (alive)". Asked
    which thing in a room is a living thing, the 1.5B model named the sink, the table and the
    picture in 11 of 20 rooms; with the states shown, and the answer confirmed (`_confirmed`), in 1."""
    said = sorted(states)
    return f"{thing} ({' and '.join(said)})" if said else thing


def called(head: str, rooms: Mapping[str, list[str]]) -> list[str]:
    """The things seen (`things_by_room`) whose names say they are what `head` is: "inclined plane
    j" and "inclined plane with a iron surface" are inclined planes."""
    return [thing for things in rooms.values() for thing in things if is_a(unqualified(thing), head)]


def things_by_room(observed: Observed) -> dict[str, list[str]]:
    """The things seen, by the room they were last seen from, in the order the rooms were first
    learnt of; places that are rooms, and the ways between them, are no things."""
    rooms = set(observed.places) | observed.visited
    found: dict[str, list[str]] = {}
    for thing in observed.seen:
        room = observed.seen_from.get(thing)
        if thing not in rooms and thing not in observed.ways and room is not None:
            found.setdefault(room, []).append(thing)
    order = {room: n for n, room in enumerate(dict.fromkeys([*observed.places, *observed.visited]))}
    return {room: sorted(found[room]) for room in sorted(found, key=lambda room: order.get(room, len(order)))}


def rooms_first_named(goal: str, rooms: dict[str, list[str]], alike: Mapping[str, int] | None = None
                      ) -> Iterable[tuple[str, list[str]]]:
    """The rooms: those right answers were found in first (`alike`, the most often first), then
    those the goal's words mention."""
    said = _plain(goal)
    named = [room for room in rooms if mentions(said, room.lower())]
    ordered = [*named, *(room for room in rooms if room not in named)]
    found_in = alike or {}
    return [(room, rooms[room]) for room in sorted(ordered, key=lambda room: -found_in.get(ROOM + room, 0))]


def _plain(text: str) -> str:
    """`text` lower-cased, its words joined by single spaces (punctuation gone), as `mentions` reads it."""
    return " ".join(re.findall(r"[\w-]+", text.lower()))


def _fitting(alike: Mapping[str, int], observed: Observed, things: Sequence[str]) -> Callable[[str], bool] | None:
    """Whether a thing shares a state with the right answers (`alike`), where any of `things`
    does; else None (nothing seen is like them: the answers' states say nothing here)."""
    def shared(thing: str) -> int:
        return sum(alike.get(STATE + state, 0) for state in observed.states.get(thing, ()))
    return (lambda thing: shared(thing) > 0) if any(shared(thing) for thing in things) else None
