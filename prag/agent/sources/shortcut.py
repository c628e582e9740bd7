"""The agent's own success at this very task, replayed without its detours.

In self-iteration a task is first won by exploring (the find-X skill walks to place after place
until the thing is seen) and then searching; replayed step for step, every later round walks the
same detours. A success of this very task (same goal, same first scene graph: the same room, as
it was) is shortened before it becomes a plan, in two ways, and the shorter is kept:

- means-ends search (`prag.agent.world.search`) on the room as that episode found it (`recall`): its
  observations are real observations of this room, so where they first showed each thing is
  where it starts now; no hidden state is read;
- the episode's own actions without the steps that did nothing for the win (`without_detours`),
  for when search has no shorter plan (a family without an action model, a greedy plan).

A success that is already the shortest is unchanged. A step of a shortened plan that cannot be
taken when its turn comes is left to the mediator's usual fallbacks, as any plan's step is.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from prag.agent.world.observed import Observed
from prag.agent.world.search import DEPTH, means_ends
from prag.envs.base import Observation, Triple
from prag.envs.domain import Domain
from prag.store.records import EpisodeRecord, StepRecord


def shortcut(episode: EpisodeRecord, domain: Domain) -> tuple[str, ...]:
    """The actions of `episode`, a success of the task about to be played, without its detours:
    search's plan from the room as the episode found it when shorter, else the replay without detours."""
    start = recall(episode, domain)
    replay = without_detours(episode, domain, start.room_of)
    # A searched plan no shorter than the replay is none: a success already shortest stays as it was.
    searched = means_ends(episode.read_as, start, (), domain, depth=min(DEPTH, len(replay) - 1))
    return searched.steps if searched is not None else replay


def recall(episode: EpisodeRecord, domain: Domain) -> Observed:
    """The room as `episode` found it at its start, as far as its observations showed it: each
    thing where it was first seen, each thing and place in the state it was first seen in, the
    places the episode learnt of; the agent where it started, holding what it held then."""
    steps = episode.steps
    actions = [step.action for step in steps if step.action is not None]
    # The admissible actions were not stored: the moves the episode made name places it knew of.
    moves = [action for action in actions if domain.movement(action) is not None]
    memory = Observed.start(_shown(episode.read_as, steps[0], moves), domain)
    # The game's grammar shows in the actions taken (ALFWorld's put command), as in the episode.
    first = Observed(domain, episode.read_as, location=steps[0].location, held=set(memory.held), actions=actions)
    _first_seen(first, memory, steps[0].triples)
    for step in steps[1:]:
        memory.update(step.action or "", _shown(episode.read_as, step, moves))
        _first_seen(first, memory, step.triples)
    first.places = list(memory.places)
    first.room_of = dict(memory.room_of)
    first.ways = dict(memory.ways)
    return first


def without_detours(episode: EpisodeRecord, domain: Domain, room_of: Mapping[str, str]) -> tuple[str, ...]:
    """The episode's actions without the opens and closes of places nothing was taken from or
    put in (ways through, such as doors, stay), then without the moves followed by another move
    (the place was passed by). A move is dropped only where the next one can be taken instead:
    within the agent's room (`room_of`, for families with rooms), and not to where the agent is."""
    steps = episode.steps[1:]  # the first is the reset
    idle = _idle_openings([step.action or "" for step in steps], episode.read_as, domain)
    kept = [step for n, step in enumerate(steps) if step.action is not None and n not in idle]
    here = episode.steps[0].location
    out: list[str] = []
    for n, step in enumerate(kept):
        following = kept[n + 1].action if n + 1 < len(kept) else None
        if _passed_by(str(step.action), following, here, domain, room_of):
            continue
        out.append(str(step.action))
        here = step.location
    return tuple(out)


def _shown(goal: str, step: StepRecord, admissible: Sequence[str]) -> Observation:
    """A stored step as the observation it was (with `admissible` standing for the unstored actions)."""
    return Observation(goal, step.observation, list(admissible), step.triples, step.scene, location=step.location)


def _first_seen(first: Observed, memory: Observed, triples: Sequence[Triple]) -> None:
    """Adds to `first` what `memory`, just shown `triples`, shows of things and places `first`
    has not seen yet."""
    for thing, place in memory.seen.items():
        if thing not in first.seen and thing not in first.held:
            first.seen[thing] = place
            first.relation[thing] = memory.relation[thing]
    for name in {name for subject, _, obj in triples for name in (subject, obj)}:
        # A thing first seen with no state has none: a state shown later came from what the episode did.
        first.states.setdefault(name, set(memory.states.get(name, ())))
    for place in (memory.opened | memory.closed) - (first.opened | first.closed):
        # Seen for the first time now: `closed` holds what was last seen closed.
        (first.closed if place in memory.closed else first.opened).add(place)


def _idle_openings(actions: Sequence[str], goal: str, domain: Domain) -> set[int]:
    """The positions of the actions opening or closing a place that no other action names, that is
    no way through and of no kind the goal needs (a goal may want it closed)."""
    used = {
        entity
        for action in actions
        if domain.movement(action) is None and _opening(action, domain) is None
        for entity in domain.entities(action)
    }
    needed = domain.needs(goal)
    idle = set()
    for n, action in enumerate(actions):
        place = _opening(action, domain)
        if place is None or place in used or domain.kind(place) in needed:
            continue
        if domain.is_passage(place):
            continue
        idle.add(n)
    return idle


def _opening(action: str, domain: Domain) -> str | None:
    """The place an open or close action acts on; None for other actions."""
    for place in domain.entities(action):
        opening = domain.open_action.format(place)
        if action == opening or action in domain.inverse(opening):
            return place
    return None


def _passed_by(action: str, following: str | None, here: str | None, domain: Domain, room_of: Mapping[str, str]) -> bool:
    """Whether `action` moves to a place only passed by: the next action is a move that can be
    taken from `here` instead (not to `here` itself; in a family with rooms, `action` goes to a
    place in the agent's room, never through a way to another)."""
    to = domain.movement(action)
    then = domain.movement(following) if following is not None else None
    if to is None or then is None or then == here or domain.relative_moves:
        return False
    if domain.is_passage(to):
        return False
    if room_of:
        return to in room_of and room_of[to] == room_of.get(here or "", here)
    return True
