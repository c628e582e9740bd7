"""Every skill a family may declare (`Domain.skills`, in the order it wants them tried), by name.

| name | what it does | what the family gives it |
|---|---|---|
| `instructed` | the irrevocable step an instruction names, once its thing is in view (prag.agent.skills.instructed) | `irrevocable` |
| `take-along` | a thing acted on while the goal has more to do is taken along, once (prag.agent.skills.carry.readying) | `marked`, `readies` |
| `created` | an instruction about a thing made earlier in the episode ("the paint you created"): made first | `combine` |
| `conditions` | a conditional branch decided: by what was measured, by the failures stored, by the LLM (prag.agent.skills.conditions) | `irrevocable` |
| `carry` | "move it to the X": the carry, or the way to where it goes (prag.agent.skills.carry) | `put`, `marked` |
| `find` | find-X: the way to where the instruction's thing was seen or may be (prag.agent.skills.explore) | places to go |
| `compared` | where the words name a degree of a property ("the most friction"), the experiment that measures the things they describe (prag.agent.skills.compared) | `examine` |
| `make` | where the thing named is nowhere, making it from things of its kind (prag.agent.skills.making) | `combine` |
| `described` | where the words describe their thing ("a(n) animal"), the one the LLM chooses among those seen (prag.agent.skills.described) | an LLM |

The last three act only where the instruction's thing was named by nothing in any place, every
place searched (`Turn.nowhere`).
"""
from __future__ import annotations

from prag.agent.plans import Plan
from prag.agent.skills.carry import readying
from prag.agent.skills.compared import Experiment, comparative, orientation
from prag.agent.skills.described import called, things_by_room
from prag.agent.skills.explore import find_plan, go_plan, opening, route
from prag.agent.skills.instructed import instructed as instructed_names
from prag.agent.skills.instructed import is_a
from prag.agent.skills.irrevocable import gambling
from prag.agent.skills.making import recipes
from prag.agent.skills.skill import Skill, Turn, scenes, timeline
from prag.agent.world.observed import Observed
from prag.envs.domain import Domain
from prag.errors import PragError
from prag.sources import StepSource


def instructed(turn: Turn) -> Plan | None:
    """The step the next instruction calls for, where its thing is in view ("First, focus on the
    thermometer"); where it names a thing's stages, one focused, the thing watched for its next."""
    work = turn.work
    step = work.instructed.step(turn.observation, turn.taken) or work.instructed.awaited(turn.observation, turn.taken)
    return work.step(step) if step is not None else None


def take_along(turn: Turn) -> Plan | None:
    """A thing focused on while the goal has more to do is taken along (the thermometer, to
    measure the substance focused on next): the family's verb that readies a move
    (`Domain.readies`), once a thing."""
    work = turn.work
    if turn.sought is None and not work.conditions.open:
        return None
    for thing in work.domain.marked_things(turn.observation.scene_triples):
        ready = readying(work.domain, thing, turn.observation, turn.taken)
        if ready is not None:
            return work.step(ready)
    return None


def created(turn: Turn) -> Plan | None:
    """The next instruction is about a thing made earlier ("the paint you created"): it is made,
    not sought."""
    left = turn.work.instructed.left
    if not left or not left[0].made:
        return None
    plan = _make(turn)
    if plan is None:
        turn.sought = None
    return plan


def conditions(turn: Turn) -> Plan | None:
    """Decide the goal's conditional branch ("If it is above -50 degrees, place it in the blue
    box") by what was measured, by the one a win of this very task took, or by the one the
    store's failures left, else the step the LLM
    says measures it, else, where a gamble may be taken now (prag.agent.skills.irrevocable), by
    what the LLM knows or a draw; the branch taken becomes the next instruction."""
    work, state = turn.work, turn.state
    if turn.sought is not None or not work.conditions.open:
        return None
    steps = [(step.action, step.observation, step.graph) for step in state.steps]
    branch = work.conditions.measured(steps, work.domain) or work.conditions.won_by(state.lessons.won_things) \
        or work.conditions.ruled_out(state.lessons.failed_things)
    if branch is None:
        named = instructed_names(work.goal, work.domain)
        step = work.conditions.measuring(turn.observation.admissible, named, work.domain, turn.observation.scene_triples)
        if step is not None:
            return work.step(step)
        left = work.conditions.left(state.lessons.failed_things)
        if left and gambling(turn.observation, state.t, state.max_steps, work.gamble_window, chance=1 / len(left),
                             later=work.later):
            branch = work.conditions.known(named[-1] if named else None) or work.conditions.drawn(left, work.goal)
    if branch is not None and not work.instructed.instruct(branch.instruction):
        work.carry.instruct(branch.instruction)
    plan = instructed(turn)
    if plan is None:
        turn.sought = work.instructed.next
    return plan


def carry(turn: Turn) -> Plan | None:
    """The step the goal's carry instruction calls for ("Then, move it to the purple box"): the
    carry or what readies it where it can be taken, else the way to the room it names (or where
    its place was seen) or a search for its place while the thing is held."""
    if turn.sought is not None:
        return None
    work = turn.work
    step = work.carry.step(turn.observation, turn.taken)
    if step is not None:
        return work.step(step)
    order = work.carry.seeking(turn.observation, turn.taken)
    if order is None:
        return None
    observed = turn.state.observed
    # The room it names, else where the place was seen, else a search for the place, else the
    # way to a place of its words already searched (a family whose places are gone to themselves).
    return go_plan(order.room or observed.room_seen(order.place), observed) or find_plan(
        [order.place], observed, work.places) or _to_place(order.place, observed, work.domain)


def _to_place(words: str, observed: Observed, domain: Domain) -> Plan | None:
    """The steps to the first known place the words name (by its name, its own name or its kind)."""
    for place in observed.places:
        if any(is_a(name.lower(), words) for name in (place, observed.own_names.get(place, ""), domain.kind(place))):
            steps = route(place, observed, domain)
            return Plan(tuple(steps), StepSource.FIND, goal=observed.goal) if steps else None
    return None


def find(turn: Turn) -> Plan | None:
    """find-X: the instruction's thing is not in view; the way to where it was seen before its
    turn, else to where it may be."""
    return turn.found() if turn.seeking() else None


def compared(turn: Turn) -> Plan | None:
    """Where the next instruction's description is a degree of a property ("the inclined plane
    with the most friction") and two or more things seen are what it describes, the next step of
    the experiment that measures them alike (prag.agent.skills.compared), or the way to their room.
    Measured in every episode, so that its outcome teaches which way the measurement reads where
    experience does not say yet."""
    work = turn.work
    target = work.instructed.described
    described = comparative(target.description) if target is not None else None
    if described is None or not turn.nowhere():
        return None
    observed, passed = turn.state.observed, turn.state.lessons.failed_things
    if work.experiment is None:
        candidates = [thing for thing in called(described.head, things_by_room(observed))
                      if thing not in passed and observed.own_names.get(thing, thing) not in passed]
        if len(candidates) < 2:
            return None
        work.experiment = Experiment(candidates, work.domain)
    step = work.experiment.step(timeline(turn.state), turn.observation.admissible)
    if step is not None:
        return work.step(step)
    done = work.experiment.done(timeline(turn.state))
    return None if done else go_plan(observed.seen_from.get(work.experiment.candidates[0]), observed)


def make(turn: Turn) -> Plan | None:
    """Where the thing named is nowhere, making it from things of its kind (prag.agent.skills.making)."""
    return _make(turn) if turn.nowhere() else None


def described(turn: Turn) -> Plan | None:
    """Where the next instruction describes its thing and every place was searched for the
    words, the thing the LLM chooses for it among those seen (prag.agent.skills.described): its
    step where it is in view, else the way back to where it was seen."""
    words = turn.sought
    if not turn.nowhere() or not _choose_described(turn):
        return None
    plan = instructed(turn)
    if plan is not None:
        return plan
    observed = turn.state.observed
    sought = turn.work.instructed.next or words  # the thing chosen: back to where it was seen
    return go_plan(observed.room_seen(sought), observed) if sought is not None else None


def _choose_described(turn: Turn) -> bool:
    """The thing the described instruction means, chosen (by the experiment's outcome where it
    measured them, else by the LLM); whether one was."""
    work, state = turn.work, turn.state
    target = work.instructed.described
    if target is None or target.description is None:
        return False
    observed, failed = state.observed, state.lessons.failed_things
    described = comparative(target.description)
    chosen = None
    if work.experiment is not None and described is not None:
        chosen = work.experiment.choice(timeline(state), described, orientation(state.lessons.orientations, described))
    chosen = chosen or work.described.choose(target.description, target.head, work.goal, observed, failed,
                                             state.lessons.answers.get(target.description),
                                             state.lessons.likeness.get(target.description))
    if chosen is not None:  # by its own name, which stays while the words for it change as it grows
        work.instructed.mean(observed.own_names.get(chosen, chosen))
    return chosen is not None


def _make(turn: Turn) -> Plan | None:
    """Where the goal names a thing to focus on that is nowhere (every place was searched),
    the next step of making it from things of its kind; where none can be tried here, a closed
    thing here opened (a second cup of yellow paint in the cupboard), a search of the places not
    yet searched for more of its kind, or the way back to where such things were seen."""
    work, state, observation = turn.work, turn.state, turn.observation
    observed, domain = state.observed, work.domain
    wanted = work.to_make(state)
    if wanted is None or domain.combine is None:
        return None
    known = [*state.lessons.recipes, *recipes(scenes(state), domain)]
    step = work.making.step(wanted, observation.scene_triples, observation.admissible, known, work.made)
    if step is not None:
        return work.step(step)
    # Nothing to try here: more things of its kind where not yet searched, or where seen.
    head = wanted.split()[-1]
    kin = [thing for thing in observed.seen if is_a(observed.own_names.get(thing, thing).lower(), head)]
    here = {s for s, _, _ in observation.scene_triples}
    closed = [step for thing in sorted(here & observed.closed) for step in opening(thing, observation.admissible, observed)
              if not domain.is_passage(thing)]
    kin_here = bool(here & set(kin))
    if kin_here and observed.location is not None:
        work.nothing_to_make.add(observed.location)  # not walked back to: another source took the agent
        # away, this skill brought it back, fifty steps to and fro
    return (Plan(tuple(closed[:1]), StepSource.FIND, goal=work.goal) if closed else None) or find_plan(
        [head], observed, work.places) or (
        None if kin_here else go_plan(next((observed.seen_from[t] for t in kin if t in observed.seen_from
                                                   and observed.seen_from[t] not in work.nothing_to_make), None),
                                             observed))


def closed(turn: Turn) -> Plan | None:
    """Where the instruction's thing is nowhere, no other skill had a step (it is no thing to make,
    no description to choose by) and the thing is named, not described: what was seen closed in
    the places searched, opened (the orange juice in the kitchen's fridge); once nothing is left
    closed, a word before a name read as the name (`Instructed.by_its_name`: "the grown orange"
    is an orange), sought from the next step."""
    if not turn.nowhere() or turn.sought is None or turn.work.instructed.described is not None:
        return None
    observed = turn.state.observed
    plan = find_plan([turn.sought], observed, turn.work.places, containers=True)
    if plan is None:
        turn.work.instructed.by_its_name(observed.names_seen())
    return plan


SKILLS: dict[str, Skill] = {
    "instructed": instructed,
    "take-along": take_along,
    "created": created,
    "conditions": conditions,
    "carry": carry,
    "find": find,
    "compared": compared,
    "make": make,
    "described": described,
    "closed": closed,
}


def declared(domain: Domain) -> list[Skill]:
    """The skills a family declares, in its order; an unknown name is an error naming the known ones."""
    unknown = [name for name in domain.skills if name not in SKILLS]
    if unknown:
        raise PragError(f"the {domain.name} family declares skills prag does not have: {', '.join(unknown)}; "
                        f"its Domain.skills may name {', '.join(SKILLS)}")
    return [SKILLS[name] for name in domain.skills]
