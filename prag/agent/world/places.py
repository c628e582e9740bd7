"""Where things are: the switchable sources of the find-X skill's search order (`--places`).

- `memory`: the store's semantic memory (`prag.store.places`, through a `Ranking` the runner
  builds under the run's `Visibility`, so round r sees rounds < r): the kinds of place things of a
  kind were seen in, in most episodes first.
- `llm`: LLM-DP's guess (Dagan, Keller, Lascarides 2023): for a kind of thing the memory knows
  nothing of, the LLM names the room's kinds of place it is most likely in or on, best first,
  decoded under a grammar of those kinds. Asked once per kind in an episode; the answer, a greedy
  one, is kept in the store's answer cache (`prag.store.answers`, on unless `--no-answer-cache`)
  like every other, so the same kind in a room of the same kinds costs no model call again.
- `rules`: the family's placement table (`Domain.search_cost`; ALFWorld's generator constants):
  places that may hold the thing and show it on arrival, then those to open, then those that
  never hold it. Only where named: a family's table is never consulted by stealth.

Precedence, whatever order the option names them in: memory, then llm, then rules. What this
store saw is evidence about these very worlds, so it leads; the LLM's common sense is asked only
where there is no evidence for the kind, so the two never compete for one kind; the rules say
what is possible rather than likely, in three coarse classes, so they break the ties the others
leave. No source at all (`--places ''`, or memory alone on an empty store) searches the places
in the agent's room first, then in the order they were learnt of.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from prag.agent.options import named
from prag.agent.protocol import Usage
from prag.envs.domain import Domain
from prag.llm.base import LLM, Message

# The sources, in their order of precedence.
PLACES = ("memory", "llm", "rules")
DEFAULT_PLACES = ("memory", "rules")  # as prag searched before the sources could be switched
GUESSES = 3  # kinds of place the LLM names, a short list: the next source orders the rest

# kind of thing -> the kinds of place things of that kind were seen in, best first, with counts
Ranking = Callable[[str], Sequence[tuple[str, int]]]


def no_ranking(kind: str) -> list[tuple[str, int]]:
    """A memory that knows nothing."""
    return []


def parse_places(text: str) -> tuple[str, ...]:
    """The place sources a comma-separated list names (`--places memory,llm,rules`), checked, in
    their order of precedence."""
    given = named(text, PLACES, "--places", "source of where things are",
                  "comma-separated (they take precedence in that order), or none: ''")
    return tuple(source for source in PLACES if source in given)


@dataclass
class LLMPlaces:
    """The LLM's guess of where a kind of thing is, among the room's kinds of place, once per kind
    (the agent makes one per episode). A reply is read as words, never evaluated: kinds it names that
    the room lacks are dropped, and a reply naming none is no guess."""

    llm: LLM
    usage: Usage
    seed: int = 0
    guessed: dict[str, list[str]] = field(default_factory=dict)

    def ranked(self, kind: str, place_kinds: Sequence[str]) -> list[str]:
        """The kinds of place of `place_kinds` (the room's) the LLM names for `kind`, best first;
        asked the first time, once the room shows a place (before, there is nothing to rank)."""
        if kind not in self.guessed and place_kinds:
            self.guessed[kind] = self._ask(kind, sorted(set(place_kinds)))
        return self.guessed.get(kind, [])

    def _ask(self, kind: str, place_kinds: list[str]) -> list[str]:
        # Without enforcement the grammar is no use to the backend and would only split the cache key.
        grammar = places_grammar(place_kinds) if self.llm.supports_choices else None
        completion = self.llm.complete(
            places_prompt(kind, place_kinds), max_tokens=8 * GUESSES, grammar=grammar, stop=["\n"], seed=self.seed
        )
        self.usage.add(completion)
        named = [part.strip().rstrip(".").lower() for part in completion.text.split(",")]
        return list(dict.fromkeys(part for part in named if part in set(place_kinds)))[:GUESSES]


def places_prompt(kind: str, place_kinds: Sequence[str]) -> list[Message]:
    """The LLM's question: the system part is the same for every kind, so a backend reuses it."""
    system = (
        "You know where things are usually kept in a home. Given the kinds of place in a room and a kind "
        f"of thing, name up to {GUESSES} of those kinds of place where such a thing is most likely found, "
        "most likely first, comma-separated."
    )
    user = f"Places in this room: {', '.join(place_kinds)}.\nThing: {kind}\nMost likely places:"
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def places_grammar(place_kinds: Sequence[str]) -> str:
    """A GBNF grammar of up to `GUESSES` of the room's kinds of place, comma-separated."""
    rest = ""
    for _ in range(GUESSES - 1):
        rest = f'(", " place {rest})?' if rest else '(", " place)?'
    return f"root ::= place {rest}\nplace ::= {' | '.join(json.dumps(kind) for kind in place_kinds)}\n"


@dataclass
class Places:
    """The sources a find-X search orders places by (`sources`, of PLACES), with what each reads:
    the family's domain (its placement table, for rules), the memory's ranking, the LLM's guess."""

    domain: Domain
    sources: tuple[str, ...] = DEFAULT_PLACES
    memory: Ranking = no_ranking
    guess: LLMPlaces | None = None  # needed when "llm" is among the sources

    def __post_init__(self) -> None:
        if "llm" in self.sources and self.guess is None:
            raise ValueError("the llm place source needs an LLMPlaces to ask")

    def key(self, targets: Sequence[str], place_kinds: Sequence[str]) -> Callable[[str], tuple[int, int, int]]:
        """A kind of place -> how early to search places of it for `targets` (lower first): its
        best rank in the memory, then in the LLM's guess, then the rules' cost of a look; a source
        that ranks nothing there gives every kind the same value. `place_kinds` are the room's."""
        memory: dict[str, int] = {}
        guessed: dict[str, int] = {}
        for target in targets:
            known = [place for place, _count in self.memory(target)] if "memory" in self.sources else []
            _best(memory, known)
            if "llm" in self.sources and not known:
                assert self.guess is not None  # __post_init__
                _best(guessed, self.guess.ranked(target, place_kinds))
        rules = "rules" in self.sources

        def key(place_kind: str) -> tuple[int, int, int]:
            costs = [c for t in targets if (c := self.domain.search_cost(place_kind, t)) is not None] if rules else []
            return memory.get(place_kind, len(memory)), guessed.get(place_kind, len(guessed)), min(costs, default=0)

        return key


def _best(ranks: dict[str, int], ranked: Sequence[str]) -> None:
    """Keep each kind's best (lowest) rank over several targets' rankings."""
    for rank, kind in enumerate(ranked):
        ranks[kind] = min(ranks.get(kind, rank), rank)
