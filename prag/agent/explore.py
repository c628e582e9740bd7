"""The find-X skill: search the places not yet searched in this episode until X is seen.

Soar ITL's environment interaction as a plan source (source "find"): the places whose contents
the agent has not seen (`Observed.to_search`) are visited, and opened when closed, in the order
the sources of where things are give (`prag.agent.places`: the semantic memory, the LLM's guess,
the family's placement rules, as `--places` names them); among equals, the place in the agent's
room first, then the one learnt of first. The plan is made again each step from what was
observed, and there is none once every thing sought is seen: the next source then takes over.
"""
from __future__ import annotations

from collections.abc import Sequence

from prag.agent.observed import Observed
from prag.agent.places import Places
from prag.agent.plans import Plan
from prag.envs.domain import Domain


def found(observed: Observed, kind: str) -> int:
    """How many things (or places) of `kind` the agent has seen or holds."""
    kind_of = observed.domain.kind
    return len(observed.where(kind)) + sum(1 for place in observed.places if kind_of(place) == kind)


def missing(observed: Observed) -> list[str]:
    """The kinds the goal needs of which fewer have been seen than it needs, in the goal's order."""
    needs = observed.domain.needs(observed.goal)
    return [kind for kind, count in needs.items() if found(observed, kind) < count]


def search_order(targets: Sequence[str], observed: Observed, places: Places) -> list[str]:
    """The places not yet searched, best first: by what the sources of where things are say of
    their kinds for the targets (`Places.key`), then those in the agent's room, then in the
    order they were learnt of."""
    kind = observed.domain.kind
    room = _room(observed)
    unsearched = observed.to_search()
    by_kind = places.key(targets, [kind(place) for place in observed.places])

    def key(index: int) -> tuple[int, ...]:
        place = unsearched[index]
        here = room is not None and observed.room_of.get(place) == room
        return *by_kind(kind(place)), 0 if here else 1, index

    return [unsearched[i] for i in sorted(range(len(unsearched)), key=key)]


def find_plan(targets: Sequence[str], observed: Observed, places: Places) -> Plan | None:
    """Steps to search the best place for `targets` that can be reached now, or None when
    nothing is sought or no unsearched place can be reached."""
    domain = observed.domain
    if not targets or domain.relative_moves:  # moves naming directions lead to no named place
        return None
    for place in search_order(targets, observed, places):
        steps = route(place, observed, domain)
        if steps:
            return Plan(tuple(steps), "find", goal=observed.goal)
    return None


def route(place: str, observed: Observed, domain: Domain) -> list[str]:
    """The actions that take the agent to `place` and show its contents, from the admissible
    ones: go there (through its room, or through a way leading to it), then open it if it is
    closed. [] when it cannot be reached from here."""
    admissible = set(observed.admissible)
    opening = [domain.open_action.format(place)] if place in observed.closed else []
    if observed.location == place:
        return opening if opening and opening[0] in admissible else []
    go = domain.go_action.format(place)
    if go in admissible:
        return [go, *opening]
    room = observed.room_of.get(place)
    if room is not None and room != _room(observed) and domain.go_action.format(room) in admissible:
        return [domain.go_action.format(room), go, *opening]
    way = observed.ways.get(place)
    if way is not None:
        through = [] if observed.location == way else [domain.go_action.format(way)]
        if way in observed.closed:
            through.append(domain.open_action.format(way))
        if through and through[0] in admissible:
            return [*through, go, *opening]
    return []


def _room(observed: Observed) -> str | None:
    """The room the agent is in, for families with rooms: where the place it is at stands, or
    the room itself."""
    location = observed.location
    if location is None or not observed.room_of:
        return None
    return observed.room_of.get(location, location)
