"""What the agent has observed in this episode: places, what it saw where, what it holds.

Built step by step from what the agent is shown, each `Observation`'s scene-graph triples,
its location and its admissible actions, read through the family's `Domain`, and from the
actions the agent took. Never from the environment's hidden state: a thing in a closed place
the agent never opened is not known here. The find skill (`prag.agent.skills.explore`) and
means-ends search (`prag.agent.world.search`) plan on it. Where moves are relative, the rooms, their
exits and where the exits taken lead are its map (`rooms`, `prag.agent.world.roommap`).
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from prag.agent.world.roommap import RoomMap
from prag.envs.base import Observation, Triple
from prag.envs.domain import Domain

OPEN, CLOSED = "open", "closed"  # the states of a place's (place, "is", state) triples


@dataclass
class Observed:
    """The episode's observations so far, as facts about places and things."""

    domain: Domain
    goal: str
    location: str | None = None  # where the agent is now (the scene graph's key node)
    places: list[str] = field(default_factory=list)  # known places, in the order first learnt of
    visited: set[str] = field(default_factory=set)  # places the agent has been at
    searched: set[str] = field(default_factory=set)  # places whose contents the agent has seen
    opened: set[str] = field(default_factory=set)  # places seen open (opened by the agent or found so)
    closed: set[str] = field(default_factory=set)  # places seen closed and not seen open since
    seen: dict[str, str] = field(default_factory=dict)  # thing -> the place it was last seen in or on
    seen_from: dict[str, str] = field(default_factory=dict)  # thing -> where the agent was when it last saw it
    own_names: dict[str, str] = field(default_factory=dict)  # thing -> its own name (Domain.name_of), where other
    relation: dict[str, str] = field(default_factory=dict)  # thing -> "in" or "on" its place
    states: dict[str, set[str]] = field(default_factory=dict)  # thing or place -> states seen ("hot", ...)
    room_of: dict[str, str] = field(default_factory=dict)  # place -> its room (families with rooms)
    ways: dict[str, str] = field(default_factory=dict)  # place -> a way (door) seen leading to it
    doors: dict[str, dict[str, str]] = field(default_factory=dict)  # room -> place -> the way seen there to it
    no_way: set[tuple[str, str]] = field(default_factory=set)  # (room, place): its way there could not be taken
    unopenable: set[str] = field(default_factory=set)  # things seen closed that no admissible action opened where they are
    held: set[str] = field(default_factory=set)
    admissible: tuple[str, ...] = ()
    actions: list[str] = field(default_factory=list)  # the actions taken, in order
    rooms: RoomMap = field(init=False)  # the map of rooms (families whose moves are relative)

    def __post_init__(self) -> None:
        self.rooms = RoomMap(self.domain)

    @classmethod
    def start(cls, observation: Observation, domain: Domain, goal: str | None = None) -> Observed:
        """What the first observation of an episode shows; `goal` as the agent read it (default:
        the observation's words)."""
        observed = cls(domain, observation.goal if goal is None else goal)
        observed._read(observation)
        return observed

    def update(self, action: str, observation: Observation) -> None:
        """What `action` led to."""
        self.actions.append(action)
        direction = self.domain.movement(action) if self.domain.relative_moves else None
        if direction is not None:
            self.rooms.moved(self.location, direction, observation.location)
        self._read(observation)

    # --- questions ----------------------------------------------------------------------------

    def where(self, kind: str) -> list[str]:
        """The things of `kind` seen (held or in a place), in the order first seen."""
        known = list(self.seen) + sorted(self.held - set(self.seen))
        return [thing for thing in known if self.domain.kind(thing) == kind]

    def names_seen(self) -> set[str]:
        """Every name seen, the things' own names too, lower-cased."""
        return {name.lower() for name in (*self.seen, *self.own_names.values())}

    def room_seen(self, name: str) -> str | None:
        """Where the agent last saw the thing called `name`, by the actions' words or its own name."""
        name = name.lower()  # the goal's words are read in lower case
        for thing, room in self.seen_from.items():
            if name in (thing.lower(), self.own_names.get(thing, "").lower()):
                return room
        return None

    def to_search(self) -> list[str]:
        """The known places whose contents have not been seen, in the order first learnt of."""
        return [place for place in self.places if place not in self.searched]

    # --- reading one observation -------------------------------------------------------------

    def _read(self, observation: Observation) -> None:
        domain = self.domain
        triples = observation.scene_triples
        self.admissible = tuple(observation.admissible)
        self.location = observation.location
        if not domain.relative_moves:  # else moves name directions, not places
            for action in observation.admissible:
                self._learn(domain.movement(action))
        else:
            self.rooms.read(observation.location, triples, observation.admissible)
        self._read_states(triples)
        if domain.in_view is not None:
            self._read_room(triples, domain.in_view)
        if domain.leads_to is not None:
            for way, relation, place in triples:
                if relation == domain.leads_to:
                    self._learn(place)
                    self.ways[place] = way
                    if self.location is not None:
                        self.doors.setdefault(self.location, {})[place] = way
        self.held = domain.held(triples)
        for thing in self.held:
            self.seen.pop(thing, None)
            self.relation.pop(thing, None)
        own = {s: o for s, r, o in triples if r == domain.own_name} if domain.own_name else {}
        for thing, relation, place in domain.placed(triples):
            self.seen[thing] = place
            self.relation[thing] = relation
            if self.location is not None:  # its room: "table" names one in the kitchen and one in the workshop
                self.seen_from[thing] = self.location
            # What stays its name while the actions' words change ("baby elephant", then "adult elephant").
            if (name := own.get(thing) or domain.name_of(thing, ())) != thing:
                self.own_names[thing] = name
            # A place seen holding something shows what it holds.
            if place in self.places and place not in self.closed:
                self.searched.add(place)
        # Where the agent is counts as searched even before it is known as a place: ScienceWorld's
        # first room is learnt of only from the next room's door back to it.
        if self.location is not None:
            self.visited.add(self.location)
            if self.location not in self.closed:
                self.searched.add(self.location)

    def _read_states(self, triples: Iterable[Triple]) -> None:
        triples = list(triples)
        # A thing in view shows all its states: they replace those seen of it before ("off" after "on").
        for subject in {s for s, relation, _ in triples if relation == "is"}:
            self.states[subject] = set()
        for subject, relation, state in triples:
            if relation != "is":
                continue
            self.states.setdefault(subject, set()).add(state)
            if state == OPEN:
                self.opened.add(subject)
                self.closed.discard(subject)
                self.states[subject].discard(CLOSED)
            elif state == CLOSED:
                self.closed.add(subject)
                self.states[subject].discard(OPEN)

    def _read_room(self, triples: Iterable[Triple], in_view: str) -> None:
        """Families whose scene graph lists the room's furniture: open furniture shows its
        contents from anywhere in the room, and the room itself is searched by being in it."""
        for subject, relation, room in triples:
            if relation != in_view:
                continue
            if subject == self.domain.holds[0]:  # the agent is in this room
                self._learn(room)
                self.visited.add(room)
                self.searched.add(room)
                continue
            self._learn(subject)
            self.room_of[subject] = room
            if subject in self.places and subject not in self.closed:
                self.searched.add(subject)

    def _learn(self, place: str | None) -> None:
        """A place the agent now knows of (a way through, such as a door, is no place to search)."""
        if place is None or place in self.places:
            return
        if self.domain.is_passage(place):
            return
        self.places.append(place)
