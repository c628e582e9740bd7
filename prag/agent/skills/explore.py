"""The find-X skill: search the places not yet searched in this episode until X is seen.

Soar ITL's environment interaction as a plan source (source "find"): the places whose contents
the agent has not seen (`Observed.to_search`) are visited, and opened when closed, in the order
the sources of where things are give (`prag.agent.world.places`: the semantic memory, the LLM's guess,
the family's placement rules, as `--places` names them); among equals, the place in the agent's
room first, then the one learnt of first. Once every place is searched, the things seen closed
that are no place (ScienceWorld's fridge, in a room) are opened, by kind, then those here first. The plan is
made again each step from what was observed, and there is none once every thing sought is seen:
the next source then takes over.

Where moves are relative (TextWorld's "go east"), no move names a place: the map of rooms
(`Observed.rooms`, `prag.agent.world.roommap`) leads instead. A thing seen in another room is gone back
to by the map; one never seen is looked for by opening what is closed in the room the agent is
in, then by going through the nearest exit not yet taken (opening the door in it when the game
admits that), breadth-first over the exits taken. A sub-goal whose command cannot be taken where
the agent is (`seek_plan`) is sought the same way: a move of its route by going back to where the
route is, another command in the room where the game admitted it, else by the things it names.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence

from prag.agent.goals.subgoals import meets, mentions, object_of, things
from prag.agent.plans import Plan
from prag.agent.world.observed import Observed
from prag.agent.world.places import Places
from prag.envs.domain import Domain
from prag.sources import StepSource


def found(observed: Observed, kind: str) -> int:
    """How many things (or places) of `kind` the agent has seen or holds."""
    kind_of = observed.domain.kind
    return len(observed.where(kind)) + sum(1 for place in observed.places if kind_of(place) == kind)


def missing(observed: Observed, needs: Mapping[str, int] | None = None) -> list[str]:
    """The kinds the goal needs (`needs`: kind -> how many; default what the family's templates
    say of the goal) of which fewer have been seen than it needs, in the goal's order."""
    needs = observed.domain.needs(observed.goal) if needs is None else needs
    return [kind for kind, count in needs.items() if found(observed, kind) < count]


def search_order(targets: Sequence[str], observed: Observed, places: Places, rooms: Sequence[str] = ()) -> list[str]:
    """The places not yet searched, best first: the rooms the goal's words name ("the animals are
    in the 'outside' location", "found near the workshop"; a room is a place a way leads to), then
    the `rooms` a stored route took its steps in (the person wired the circuit in the workshop),
    then by what the sources of where things are say of their kinds for the targets (`Places.key`),
    then those in the agent's room, then in the order they were learnt of. A place in a room,
    which the goal may name as where to put things, is not moved ahead."""
    kind = observed.domain.kind
    room = _room(observed)
    unsearched = observed.to_search()
    by_kind = places.key(targets, [kind(place) for place in observed.places])
    goal = observed.goal.lower()

    def key(index: int) -> tuple[int, ...]:
        place = unsearched[index]
        here = room is not None and observed.room_of.get(place) == room
        way = place in observed.ways
        named = 0 if way and mentions(goal, place.lower()) else 1 if way and place in rooms else 2
        return named, *by_kind(kind(place)), 0 if here else 1, index

    return [unsearched[i] for i in sorted(range(len(unsearched)), key=key)]


def find_plan(targets: Sequence[str], observed: Observed, places: Places, containers: bool = True,
              rooms: Sequence[str] = ()) -> Plan | None:
    """Steps to search the best place for `targets` that can be reached now (`search_order`, with
    `rooms` first), or None when nothing is sought or no unsearched place can be reached; once
    every place is searched, with `containers`, what was seen closed in them (`_containers`)."""
    domain = observed.domain
    if not targets:
        return None
    if domain.relative_moves:  # moves naming directions lead to no named place: the map leads
        return _as_plan(_look_for(targets, observed, places), observed)
    order = search_order(targets, observed, places, rooms)
    here = observed.location
    for place in order:
        steps = route(place, observed, domain)
        if steps:
            return Plan(tuple(steps), StepSource.FIND, goal=observed.goal)
        if here is not None and place in observed.doors.get(here, {}):
            observed.no_way.add((here, place))  # not to be walked back to for it, to and fro
    return _toward(set(order), observed, domain) or (
        _containers(targets, observed, places) if containers and not order else None)


def _containers(targets: Sequence[str], observed: Observed, places: Places) -> Plan | None:
    """Once every place is searched: the things seen closed that are no place to go to and no
    way through (ScienceWorld's fridge, in a room), opened, by what the sources of where things
    are say of their kinds, then those in the agent's room first; the way to the room of the
    first, where it is elsewhere. The orange juice "located around the kitchen" was in its fridge,
    and three rounds searched the nine rooms and never looked in it. (Not for families whose moves are
    relative: `_look_for` opens what is closed in each room it passes.)"""
    domain = observed.domain
    unseen = [kind for kind in targets if not found(observed, kind)]  # one seen already is chosen among those seen
    closed = [thing for thing in sorted(observed.closed) if thing in observed.seen and thing not in observed.places
              and thing not in observed.unopenable and not domain.is_passage(thing)]
    if not closed or not unseen:
        return None
    by_kind = places.key(unseen, [domain.kind(thing) for thing in closed])
    here = observed.location
    closed.sort(key=lambda thing: (*by_kind(domain.kind(thing)), observed.seen_from.get(thing) != here))
    for thing in closed:
        room = observed.seen_from.get(thing)
        if room == here:
            steps = opening(thing, observed.admissible, observed)
            if steps:
                return Plan(tuple(steps), StepSource.FIND, goal=observed.goal)
            observed.unopenable.add(thing)  # not walked back to: from the next room it led here again
            continue
        plan = go_plan(room, observed)
        if plan is not None:
            return plan
    return None


def go_plan(room: str | None, observed: Observed) -> Plan | None:
    """Steps to a room by the ways seen: there when it can be reached now, else the first move
    towards the nearest room with a way to it; None when no way to it is known, or `room` is
    None or where the agent is."""
    if room is None or room == observed.location:
        return None
    steps = route(room, observed, observed.domain)
    return Plan(tuple(steps), StepSource.FIND, goal=observed.goal) if steps else _toward({room}, observed, observed.domain)


def _toward(places: set[str], observed: Observed, domain: Domain) -> Plan | None:
    """The first move towards the nearest room with a way to one of `places`, by the ways seen
    room by room (ScienceWorld's workshop, seen from the hallway, is out of reach from the
    greenhouse beyond it: back to the hallway first). None when no such room is known."""
    here = observed.location
    if here is None:
        return None
    came: dict[str, str | None] = {here: None}
    queue = deque([here])
    while queue:
        room = queue.popleft()
        if room != here and any((room, place) not in observed.no_way for place in places & set(observed.doors.get(room, {}))):
            while (back := came[room]) != here and back is not None:
                room = back
            steps = route(room, observed, domain)
            return Plan(tuple(steps), StepSource.FIND, goal=observed.goal) if steps else None
        for there in observed.doors.get(room, {}):
            if there not in came:
                came[there] = room
                queue.append(there)
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
        # A way one cannot go to is one the agent is beside (ScienceWorld's doors, in the room).
        beside = observed.location == way or domain.go_action.format(way) not in admissible
        through = [] if beside else [domain.go_action.format(way)]
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


# --- where moves are relative: by the map of rooms ---------------------------------------------


def seek_plan(command: str, route_at: str | None, observed: Observed) -> Plan | None:
    """Steps towards a sub-goal whose `command` cannot be taken where the agent is: for a move of
    the route, back to where the route is (`route_at`); for another command, to the room where the
    game admitted it, else to the things it names, looked for as find-X does. None when the map
    knows no way."""
    rooms, here = observed.rooms, observed.location
    if observed.domain.movement(command) is not None:
        return _as_plan(_walk(observed, lambda room: room == route_at), observed)
    steps = _walk(observed, lambda room: room != here and any(meets(command, a) for a in rooms.admitted.get(room, ())))
    return _as_plan(steps or _look_for(things(command), observed), observed)


def _as_plan(steps: list[str] | None, observed: Observed) -> Plan | None:
    return Plan(tuple(steps), StepSource.FIND, goal=observed.goal) if steps else None


def _look_for(targets: Sequence[str], observed: Observed, places: Places | None = None) -> list[str] | None:
    """Steps towards things not held and not in the agent's room: to the room one was seen in,
    else to the room on the map where the sources of where things are (`places`: the store's
    memory first) say such things were, else to open what is closed here (those places first),
    else through an exit not yet taken, here or in the nearest room that has one (or something closed)."""
    rooms, here = observed.rooms, observed.location
    sought = [t for t in targets if t not in observed.held and rooms.where.get(t) != here]
    if not sought or here is None:
        return None
    seen_in = {rooms.where[t] for t in sought if t in rooms.where}
    steps = _walk(observed, lambda room: room in seen_in) if seen_in else None
    if steps:
        return steps
    kind = observed.domain.kind
    rank = places.key(sought, [kind(r) for r in rooms.exits]) if places is not None else None
    if rank is not None:
        unranked = rank("")  # what a kind no source says anything of gets
        known = sorted((r for r in rooms.exits if r != here and rank(kind(r)) < unranked), key=lambda r: rank(kind(r)))
        steps = _walk(observed, lambda room: room == known[0]) if known else None
        if steps:
            return steps
    closed_here = _closed_in(here, observed)
    if places is not None:
        order = places.key(sought, [kind(t) for t in closed_here])
        closed_here = sorted(closed_here, key=lambda t: order(kind(t)))
    for thing in closed_here:
        steps = opening(thing, observed.admissible, observed)
        if steps:
            return steps
    for direction in _open_exits(here, observed):
        steps = _through(here, direction, observed)
        if steps:
            return steps
    return _walk(observed, lambda room: room != here and bool(_closed_in(room, observed) or _open_exits(room, observed)))


def _closed_in(room: str, observed: Observed) -> list[str]:
    """The things seen closed in `room`, no way out of it, that the game admitted opening there:
    the containers still to look in."""
    rooms = observed.rooms
    ways = set(rooms.exits.get(room, {}).values())
    admitted = rooms.admitted.get(room, set())
    return [thing for thing, seen_in in rooms.where.items()
            if seen_in == room and thing in observed.closed and thing not in ways and opening(thing, admitted, observed)]


def _open_exits(room: str, observed: Observed) -> list[str]:
    """The directions of `room`'s exits not yet taken that the game admitted going through, or
    opening the door of, there (a locked door whose key is not held is neither)."""
    rooms = observed.rooms
    admitted = rooms.admitted.get(room, set())
    exits = rooms.exits.get(room, {})
    go = observed.domain.go_action.format
    return [d for d in rooms.unexplored(room) if go(d) in admitted or opening(exits[d], admitted, observed)]


def opening(thing: str, admissible: Iterable[str], observed: Observed) -> list[str]:
    """The action among `admissible` that opens `thing`, as a one-step list ([] when none does):
    one of the family's readying verbs up to its opening verb (`Domain.readies`: unlock, open;
    not take, which readies what is to be put, not a door)."""
    domain = observed.domain
    opener = domain.open_action.split(" ", 1)[0]
    verbs = domain.readies[: domain.readies.index(opener) + 1] if opener in domain.readies else (opener,)
    admissible = list(admissible)
    for verb in verbs:
        for action in admissible:
            if object_of(action, verb) == thing:
                return [action]
    return []


def _through(room: str, direction: str, observed: Observed) -> list[str]:
    """The steps through `room`'s exit in `direction`, taken from `room`: its door opened first
    when it was seen closed, even where the move is admissible (a world may list "move north"
    through a closed door and answer "the door is closed"). [] when the move cannot be made or
    readied now."""
    go = observed.domain.go_action.format(direction)
    way = observed.rooms.exits.get(room, {}).get(direction)
    closed = way is not None and way in observed.closed
    if go in observed.admissible and not closed:
        return [go]
    opened = opening(way, observed.admissible, observed) if closed and way is not None else []
    return [*opened, go] if opened else []


def _walk(observed: Observed, arrived: Callable[[str], bool]) -> list[str] | None:
    """The moves to the nearest room where `arrived` holds, by the exits taken: [] when the agent
    is in one, None when none is known to be reachable or the first move cannot be made now."""
    here = observed.location
    path = observed.rooms.path(here, arrived) if here is not None else None
    if path is None:
        return None
    if not path:
        return []
    first = _through(*path[0], observed)
    go = observed.domain.go_action.format
    return [*first, *(go(direction) for _, direction in path[1:])] if first else None
