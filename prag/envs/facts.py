"""What the agent observed, as ground facts of one vocabulary shared by every family: the state
that action models are learned over (prag.envs.sam) and that learned models plan from
(prag.envs.learned).

The vocabulary is the agent's, not a family's: where the agent is (`at`), what it holds (`holds`,
and `handempty` when nothing), where a thing was seen (`placed`, in or on alike), the states seen
of things and places (`is-hot`, `is-open`, ...), and each name's kind (`kind-apple`), which never
changes. It is read from `Seen` alone, so it holds only what the agent was shown: a fact absent
is unknown or false, never known false.

A family says what its goals mean in this vocabulary (`GoalFacts`, from its Domain's
`goal_facts`): kinds of things and the facts that must hold of them.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from prag.envs.model import Seen

Fact = tuple[str, ...]  # (predicate, argument names...), e.g. ("placed", "apple 1", "countertop 1")

AT, HOLDS, PLACED, HANDEMPTY = "at", "holds", "placed", "handempty"
NONE = "none"  # a facts sentence saying the words ask for no state of things
SEPARATOR = "; "  # between the facts of a facts sentence
# A fact of a facts sentence: "two mugs in cabinet", "apple in fridge", "apple is clean", "you hold pen".
_FACT = re.compile(r"(?:(?P<two>two) )?(?P<thing>.+?) in (?P<place>.+)|(?P<it>.+?) is (?P<state>.+)|you hold (?P<held>.+)")
KIND, STATE = "kind-", "is-"


def kind_predicate(kind: str) -> str:
    """The predicate saying a name is of `kind` ("alarm clock" -> "kind-alarm-clock")."""
    return KIND + _word(kind)


def state_predicate(state: str) -> str:
    """The predicate saying a thing or place is in `state` ("hot" -> "is-hot")."""
    return STATE + _word(state)


def _word(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


def fluents(seen: Seen) -> frozenset[Fact]:
    """The facts of `seen` that actions change."""
    facts: set[Fact] = set()
    if seen.location is not None:
        facts.add((AT, seen.location))
    facts.update((HOLDS, thing) for thing in seen.held)
    if not seen.held:
        facts.add((HANDEMPTY,))
    facts.update((PLACED, thing, place) for thing, place in seen.seen.items() if thing not in seen.held)
    for name, states in seen.states.items():
        facts.update((state_predicate(state), name) for state in states)
    return frozenset(facts)


def kinds(names: Iterable[str], kind: Callable[[str], str]) -> frozenset[Fact]:
    """The static facts saying what kind each name is."""
    return frozenset((kind_predicate(kind(name)), name) for name in names)


def names_in(facts: Iterable[Fact]) -> set[str]:
    """Every name the facts mention."""
    return {name for fact in facts for name in fact[1:]}


@dataclass(frozen=True)
class GoalFacts:
    """A goal in the shared vocabulary: there are things of these kinds (`things`: variable ->
    kind) of which `facts` hold (over the variables), the variables in `distinct` pairs being
    different things. "Put a hot apple in a fridge": {o: apple, r: fridge}, is-hot(o), placed(o, r)."""

    things: tuple[tuple[str, str], ...]  # a kind "" is any kind
    facts: tuple[Fact, ...]
    distinct: tuple[tuple[str, str], ...] = ()

    @property
    def kinds(self) -> list[str]:
        return [kind for _, kind in self.things if kind]

    def predicates(self) -> dict[str, int]:
        """The predicates the goal names, with their arities (kinds included)."""
        named = {fact[0]: len(fact) - 1 for fact in self.facts}
        named.update({kind_predicate(kind): 1 for kind in self.kinds})
        return named

    def pddl(self, variable: Callable[[str], str] = lambda v: f"?{v}") -> str:
        """The goal as a PDDL condition."""
        parts = [f"({kind_predicate(kind)} {variable(v)})" for v, kind in self.things if kind]
        parts += ["(" + " ".join([fact[0], *map(variable, fact[1:])]) + ")" for fact in self.facts]
        parts += [f"(not (= {variable(a)} {variable(b)}))" for a, b in self.distinct]
        variables = " ".join(variable(v) for v, _ in self.things)
        return f"(exists ({variables}) (and {' '.join(parts)}))"


def read_facts(sentence: str) -> GoalFacts | None:
    """The goal a facts sentence states ("apple is clean; apple in fridge": a thing in or on a
    place, "two mugs in cabinet" for two of a kind, a thing in a state, "you hold pen"), None where
    it is no facts sentence or says none: how goals read in open vocabulary are written
    (prag.agent.goals.fact_reader) and stored as readings."""
    text = sentence.strip().lower().rstrip(".")
    if not text or text == NONE:
        return None
    variables: dict[str, str] = {}
    things: list[tuple[str, str]] = []
    facts: list[tuple[str, ...]] = []
    distinct: list[tuple[str, str]] = []

    def var(kind: str, fresh: bool = False) -> str:
        if kind in variables and not fresh:
            return variables[kind]
        name = f"v{len(things)}"
        things.append((name, kind))
        variables.setdefault(kind, name)
        return name

    for part in text.split(SEPARATOR.strip()):
        match = _FACT.fullmatch(part.strip())
        if match is None:
            return None
        if match["thing"] is not None:
            kind = _singular(match["thing"]) if match["two"] else match["thing"]  # "two mugs": mug
            place = var(match["place"])
            first = var(kind)
            facts.append((PLACED, first, place))
            if match["two"]:
                second = var(kind, fresh=True)
                facts.append((PLACED, second, place))
                distinct.append((first, second))
        elif match["it"] is not None:
            facts.append((state_predicate(match["state"]), var(match["it"])))
        else:
            facts.append((HOLDS, var(match["held"])))
    return GoalFacts(tuple(things), tuple(facts), tuple(distinct))


def _singular(words: str) -> str:
    """The singular of a plural's last word ("cellphones", "boxes", "knives" aside): an English
    plural's regular endings only, as "two THINGs" writes it."""
    for plural, singular in (("ies", "y"), ("sses", "ss"), ("xes", "x"), ("ches", "ch"), ("shes", "sh"), ("s", "")):
        if words.endswith(plural) and not words.endswith("ss"):
            return words[: len(words) - len(plural)] + singular
    return words
