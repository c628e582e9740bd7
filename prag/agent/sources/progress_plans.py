"""The progress source: sub-goals learned from reward (prag.agent.goals.milestones), reached again.

At an episode's first step the verified corrections and stored episodes retrieved for it (those of
this very task, and of other variations of its template: their goals differ only in the things
they name) are read for what their scores rewarded; their sub-goals are merged in the order they
were reached (corrections first, then this very task's episodes, then the others). Each step the
source marks the sub-goals this episode reached (their core facts hold now, re-bound to its
things; a sub-goal that is an action, once the score rose while it was the next) and the actions
to avoid here; then, where no earlier source has a step that can be taken, it offers a step toward
the sub-goal it pursued last, else the first one a step can be taken toward, trying in order (and
where the earlier step is find-X's search, the way to the next sub-goal's room, when this very
task's episodes walked there: the same house):

1. its route, re-bound: where what held with it holds now, the step that reached it first; else
   the first of the route's steps, from where the route was left, that can be taken now;
2. the route's last step again, while a change that takes time is awaited (`_wait`);
3. means-ends search to its facts on the action model learned from the store;
4. in an episode of this very task, the way to the room the route's step was taken in; for a
   sub-goal of being somewhere, the way there (the map of the rooms the episodes walked);
5. carrying its thing to its place (the family's `readies` and `put`);
6. the way back to where its things were seen; a closed thing here opened, or find-X, for its
   things not yet seen.

Where none has a step, the LLM (or the exploration past its budget) takes it, with the sub-goal in
the prompt. A sub-goal that many steps toward raised no score is given up until the score rises.
An irrevocable step on what the goal does not name, or one answering an undecided conditional
branch, is held back as the LLM's are; one that failed this very task is never offered.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from typing import ClassVar

from prag.agent.goals.milestones import (Binder, Lesson, LiftedAction, Milestone, RouteStep, Term, Way, as_goal,
                                        facts_of, lesson, makes_what_it_names, merged, states_of, whole)
from prag.agent.plans import Plan, episode_rewording
from prag.agent.proposal import Proposal, Standing, View
from prag.agent.skills.carry import readying
from prag.agent.skills.explore import find_plan, go_plan, opening
from prag.agent.skills.irrevocable import FULL_SCORE, Irrevocable, answer_places, answer_targets, into, read_off
from prag.agent.sources.past_episodes import ThisTask, verified_replays
from prag.agent.sources.plan_source import Planning
from prag.agent.world.places import Places
from prag.agent.world.search import to_facts
from prag.envs.base import Observation
from prag.envs.facts import AT, PLACED, STATE, Fact
from prag.sources import StepSource
from prag.store.records import EpisodeRecord, StepRecord

# How far along a route a step may be taken from where the route was left: an action of it not
# admissible now (its door already open) is passed over, not one that needs a room not yet reached.
LOOKAHEAD = 3
# How often the last step of a route is taken again while its sub-goal is awaited (heat takes time).
WAITS = 10
# The steps offered toward one sub-goal, the score not rising, before it is given up for the episode
# (until the score rises): another variation's sub-goal may not be reachable here at all, and two
# such sent the agent back and forth between two rooms.
EFFORT = 15
# How often one move from one room is offered toward one sub-goal, the score not rising, before it is given
# up. The tidy family's rounds pass a hub room three times toward one sub-goal and reach it (3: 77.1 -> 70.9).
ROUNDABOUT = 4


class ProgressPlans:
    """Sub-goals learned from reward: the next one not yet reached, by the route that reached it before."""

    standing: ClassVar[Standing] = Standing.SEARCHED

    def __init__(self, planning: Planning) -> None:
        self.planning = planning
        s = planning.settings
        self.irrevocable = Irrevocable(s.domain)
        self.places = Places(s.domain, s.config.places, s.ranking, None)
        # The family's commands that carry a thing off (group `thing`): what an awaited change keeps from.
        self.carrying = [_as_pattern(t) for t in (s.domain.put, s.domain.pour, s.domain.combine) if t] + [
            re.compile(re.escape(verb) + r" (?P<thing>.+)") for verb in s.domain.readies]
        self._at = 0
        self._read_of: tuple[Observation, tuple[frozenset[Fact], dict[str, str]]] | None = None
        self.restart()

    def restart(self) -> None:
        self.milestones: list[Milestone] | None = None
        self.ways: list[Way] = []
        self.avoid: list[tuple[int | None, LiftedAction]] = []  # (the episode it was learned from, the action)
        self.same_task: set[int | None] = set()  # the episodes of this very task: their rooms are where they were
        self.corrected: set[int | None] = set()  # the corrections among the episodes learned from
        self.makers: set[int | None] = set()  # those that made a thing the goal names (`makes_what_it_names`)
        self.heading: tuple[int, int, str] | None = None  # (sub-goal, route step, room) being walked to
        self.passed: set[tuple[int, int]] = set()  # route steps not found where the route took them
        self.rewarded_first: set[int] = set()  # sub-goals (their ids) whose rewarded step was tried before their route
        self.focus: Milestone | None = None  # the sub-goal a step was last offered toward
        self.waited: dict[int, int] = {}  # sub-goal (its id) -> the steps waited for it (`_wait`)
        self.efforts: dict[int, int] = {}  # sub-goal (its id) -> the steps offered toward it since the score last rose
        self.walked: dict[int, Counter[tuple[str | None, str]]] = {}  # sub-goal (its id) -> (room, move) -> times offered
        self.binders: dict[int | None, Binder] = {}
        self.names: dict[str, str] = {}  # every name seen as the actions say it -> canonical
        self.named: str | None = None  # the route step offered last, where the person's words name its things here
        self.reached: set[int] = set()
        self.along: dict[int, int] = {}  # sub-goal (its id) -> how far along its route the episode went
        # (sub-goal, the route's step offered last, its binder and binding: kept once the step is taken)
        self.offered: tuple[int, str, Binder, dict[Term, str]] | None = None
        self.score: float | None = None
        self.awaiting: dict[int | None, set[str]] = {}  # the things an awaited change needs, by the episode learned from
        self.decided: set[str] = set()  # branch answers a person's evidence decided (`_as_the_person_found`)
        self.avoided: set[str] = set()  # what stored episodes' scores fell after, re-bound here
        self._at = 0

    @property
    def next(self) -> Milestone | None:
        """The first sub-goal not yet reached, None when every one is (or none was learned)."""
        return next((m for i, m in enumerate(self.milestones or ()) if i not in self.reached), None)

    def propose(self, view: View) -> Proposal | None:
        p, observation = self.planning, view.observation
        if self._at == p.state.t:
            return None
        self._at = p.state.t
        if self.milestones is None:
            self._learn(observation)
        self._update(observation)
        self.avoided = self._avoided(observation)
        # The other sources do not carry off what an awaited change needs either.
        p.state.avoided = self.avoided | self._undisturbing(observation)
        left = [m for i, m in enumerate(self.milestones or ()) if i not in self.reached
                and self.efforts.get(id(m), 0) < EFFORT]
        if not left and self._once_more(observation):
            left = [m for i, m in enumerate(self.milestones or ()) if i not in self.reached]
        p.state.subgoal = left[0].describe() if left else None
        if not left:
            return None
        if view.step_now() is not None:
            # An earlier source has a step; but where it is searching for things (find-X) and this
            # very task's episodes know the way to the room of the next sub-goal, the way goes
            # first: a round replayed round 0's whole search, 20 steps, to a room 3 steps away.
            # So does the route of a person who made the thing the goal names, where its next step
            # can be taken or walked to (the goal's sugar water is made, not found: find searched the
            # house for it for 47 steps).
            searching = view.plan is not None and view.plan.source == StepSource.FIND
            way = self._known_way(left[0], observation) or self._person_s(left[0], observation) \
                or self._named_here(left[0], observation) if searching else None
            return self._offer(left[0], way, observation) if way is not None else None
        # The sub-goal pursued last step first (not one walked away from to another's thing and back),
        # then the first a step can be taken toward (the cup may not be in this room).
        for milestone in sorted(left, key=lambda m: m is not self.focus):
            plan = self._toward_milestone(milestone, observation)
            # Whichever way found it (a search to a sub-goal of a focus plans the focus itself).
            offered = self._offer(milestone, plan, observation) if plan is not None else None
            if offered is not None:
                return offered
        self.focus = None
        return None

    def _once_more(self, observation: Observation) -> bool:
        """Every sub-goal reached and the task not won: a person's last sub-goal that is an action
        they took again and again (focused the wolf at each stage it grew to), made a sub-goal once
        more. The person's wolf had three stages; this dove has four."""
        if observation.score is None or observation.score >= FULL_SCORE:
            return False
        milestones = self.milestones or []
        last = max((i for i, m in enumerate(milestones) if m.origin in self.corrected and m.action is not None
                    and sum(other.origin == m.origin and other.key == m.key for other in milestones) > 1), default=None)
        if last is None:
            return False
        self.reached.discard(last)
        for progress in (self.along, self.waited, self.efforts):
            progress.pop(id(milestones[last]), None)
        return True

    def _offer(self, milestone: Milestone, plan: Plan, observation: Observation) -> Proposal | None:
        """The plan's step toward the sub-goal, unless it goes in circles, guesses an irrevocable
        step, or answers a branch not decided (`_held_back`; one a person's evidence decided is)."""
        step = plan.steps[0]
        if self._in_circles(milestone, step, observation) or self._guessed(milestone, step) \
                or self._before_its_turn(milestone, step) \
                or step not in self.decided and self._held_back(step, observation):
            return None
        self.efforts[id(milestone)] = self.efforts.get(id(milestone), 0) + 1
        self.focus = milestone
        self.planning.state.subgoal = milestone.describe()
        if step == self.planning.state.last.action:
            self._await(observation)
            self.planning.state.awaiting = True
        return Proposal.of(plan)

    def _guessed(self, milestone: Milestone, step: str) -> bool:
        """Whether `step` is irrevocable and a step of the sub-goal's route stands for it only as a
        guess: the stored step said its thing otherwise than by its name, and no name here is those
        words re-worded (`Binder.command`'s `exact`). The stored focus was on the baby wolf; here
        the dove is an adult, and a focus on it failed the task. Not where the step acts again on
        the goal's thing, renamed since this episode acted on it so (`_renamed`): the person's
        juvenile wolf, focused after their baby wolf grew, is this dove egg hatched."""
        domain = self.planning.settings.domain
        if domain.aimed_at(step) is None:
            return False
        binder = self.binders[milestone.origin]
        return any(binder.command(action, {}, (step,)) == step and binder.command(action, {}, (step,), exact=True) is None
                   and not (any(t.phrase is not None for t in action[1]) and self._renamed(step))
                   for _, action in milestone.steps)

    def _before_its_turn(self, milestone: Milestone, step: str) -> bool:
        """Whether `step` is irrevocable and a person's sub-goal before this one, of the same
        correction, has an irrevocable step not yet reached: their focuses are taken in their
        order (the adult tree is not focused before the seedling, whatever grew since)."""
        domain = self.planning.settings.domain
        if milestone.origin not in self.corrected or domain.aimed_at(step) is None:
            return False
        for index, earlier in enumerate(self.milestones or ()):
            if earlier is milestone:
                return False
            if index not in self.reached and earlier.origin == milestone.origin \
                    and self.efforts.get(id(earlier), 0) < EFFORT \
                    and any(domain.aimed_at(action[0].format(*action[1])) for _, action in earlier.steps):
                return True
        return False

    def _renamed(self, step: str) -> bool:
        """Whether the last irrevocable step this episode took on the thing `step` is aimed at said
        it otherwise: the same thing at another stage (focused as the "egg dove", now the
        "hatchling dove"), acted on again as the person acted on theirs at each stage."""
        domain = self.planning.settings.domain
        thing = domain.aimed_at(step)
        if thing is None:  # asked of every step held back: no walk of the episode for one that is not irrevocable
            return False
        canonical = self.names.get(thing, thing)
        last = next((aimed for s in reversed(self.planning.state.steps) if s.action
                     and (aimed := domain.aimed_at(s.action)) and self.names.get(aimed, aimed) == canonical), None)
        return last is not None and last != thing

    def _in_circles(self, milestone: Milestone, step: str, observation: Observation) -> bool:
        """Whether moves toward `milestone` go round in circles: the same move from the same room
        offered the fourth time since the score last rose (its route's room, and the search for a
        thing of it not there, pull two ways). The sub-goal is then given up until the score rises.
        A melting-point task walked kitchen-hallway for thirty steps, a conductivity task
        kitchen-hallway-workshop-hallway."""
        if self.planning.settings.domain.movement(step) is None:
            return False
        walked = self.walked.setdefault(id(milestone), Counter())
        walked[(observation.location, step)] += 1
        if walked[(observation.location, step)] >= ROUNDABOUT:
            self.efforts[id(milestone)] = EFFORT
            return True
        return False

    def _avoided(self, observation: Observation) -> set[str]:
        """The admissible actions that are ones a stored episode's score fell after, re-bound here."""
        found = set()
        for origin, action in self.avoid:
            command = self.binders[origin].command(action, {}, observation.admissible)
            if command is not None:
                found.add(command)
        return found

    def _await(self, observation: Observation) -> None:
        """The step just taken is offered again (a wait, the stove lit again): a change that takes
        time is awaited. What it needs is what held with each sub-goal not yet reached, where that
        holds now: kept as it is (`_undisturbing`) until the score rises."""
        state = self._facts(observation)
        for index, milestone in enumerate(self.milestones or ()):
            bound = self.binders[milestone.origin].holds(milestone.context, state, by_role=True) \
                if milestone.context and index not in self.reached else None
            if bound:
                self.awaiting.setdefault(milestone.origin, set()).update(bound.values())

    def _undisturbing(self, observation: Observation) -> set[str]:
        """While a change is awaited (`_await`): the admissible actions that would move, pour, pick
        up or combine a thing it needs, or put another thing into one. A draw past the LLM budget
        poured the gallium out of the pot heating in the blast furnace; another put the recipe into
        the cup of sugar and water, and nothing mixed from it was sugar water."""
        if not self.awaiting:
            return set()
        return {action for action in observation.admissible for pattern in self.carrying
                if (match := pattern.fullmatch(action)) for origin, things in self.awaiting.items()
                if {self.binders[origin].names.get(name, name) for name in match.groupdict().values()} & things}

    def _toward_milestone(self, milestone: Milestone, observation: Observation) -> Plan | None:
        return (self._route(milestone, observation, walk=False) or self._wait(milestone, observation)
                or self._searched(milestone, observation)
                or self._route(milestone, observation, walk=True) or self._carry(milestone, observation)
                or self._back_to(milestone) or self._find(milestone, observation))

    def _learn(self, observation: Observation) -> None:
        """The sub-goals of the verified corrections and stored episodes of this task's template
        (the goals differ only in the things they name), merged in order, corrections first."""
        p, s = self.planning, self.planning.settings
        pool = s.experiences.retrieve(p.goal.sentence, observation.scene_text, s.visibility, k=s.config.plan_pool) \
            if s.experiences is not None else []
        p.llm_step.retrieve_corrections(observation.scene_text)
        corrected = verified_replays(p.llm_step.correction_pool)
        lessons: list[Lesson] = []
        origins: list[int | None] = []
        task = ThisTask.of(p.goal.sentence, p.first, s.domain, p.goal.instruction)
        # Corrections first, then this very task's own episodes (a cooking game's recipe is its
        # own: another game's rewarded ingredients are not this one's), then the template's others.
        for episode, rank in [*((e, 0) for e in corrected), *((e.episode, 1 if task.played_in(e.episode) else 2) for e in pool)]:
            rewording = episode_rewording(episode, p.goal.sentence)
            if rewording is None:
                continue
            learned = lesson(episode, s.domain, rank)
            if learned.milestones or learned.avoid:
                lessons.append(learned)
                origins.append(episode.id)
                self.binders[episode.id] = Binder(s.domain, rewording)
                if task.played_in(episode):
                    self.same_task.add(episode.id)
                if rank == 0:
                    self.corrected.add(episode.id)
                    if makes_what_it_names(episode, s.domain):
                        self.makers.add(episode.id)
        self.milestones = merged(lessons)
        self.ways = list(dict.fromkeys(way for learned in lessons for way in learned.ways))
        self.avoid = [(learned_from, action) for learned_from, learned in zip(origins, lessons) for action in learned.avoid]

    def _update(self, observation: Observation) -> None:
        """What this step shows: the names seen, and the sub-goals it reached."""
        domain = self.planning.settings.domain
        state, names = self._read(observation)
        # The names the actions offered here use are names here too (an empty shelf is in no triple).
        offered = {name: name for action in observation.admissible for name in domain.entities(action)}
        self.names.update({**offered, **names})
        for binder in self.binders.values():
            binder.see({**offered, **names})
        rose = self.score is not None and observation.score is not None and observation.score > self.score
        self.score = observation.score
        if rose:
            self.efforts.clear()  # what was given up on may be reachable from here
            self.walked.clear()
            self.awaiting = {}
        last = self.planning.state.last.action
        if self.offered is not None and last == self.offered[1]:
            self.along[self.offered[0]] = self.along.get(self.offered[0], 0) + 1
            self.offered[2].keep(self.offered[3])
        self.offered = None
        # One rise reaches one sub-goal that is an action, the one that was next, and none where
        # the rise is a sub-goal of facts reached (the focus that raised the score is not the
        # connection after it).
        was_next = self.next
        credited = marked = False
        for index, milestone in enumerate(self.milestones or ()):
            if index in self.reached:
                continue
            binder = self.binders[milestone.origin]
            # A mark is reached by the step that made it and raised the score, one a step: the mark
            # stays on a seed focused that has sprouted since, and growing raises the score too.
            marks = self._marks(milestone)
            made_mark = rose and not marked and last is not None and domain.aimed_at(last) is not None
            if milestone.core and binder.holds(milestone.core, state) is not None and (not marks or made_mark):
                self.reached.add(index)
                credited = credited or rose
                marked = marked or marks
                self.reached.update(self._means_to(index))
        # ... and only where the step taken was that action here (entering the workshop is not reading the recipe).
        if rose and not credited and was_next is not None and not was_next.core and was_next.action is not None \
                and last is not None and self.binders[was_next.origin].command(was_next.action, {}, (last,)) == last:
            self.reached.add(next(i for i, m in enumerate(self.milestones or ()) if m is was_next))

    def _marks(self, milestone: Milestone) -> bool:
        """Whether the sub-goal is a thing marked as irrevocably acted on (focused): reached where a
        step raised the score, not where the mark stays on a thing grown since (the seed focused,
        a seedling now, is not the seedling the person focused next)."""
        marked = self.planning.settings.domain.marked
        return marked is not None and any(predicate == STATE + marked for predicate, _ in milestone.core)

    def _means_to(self, index: int) -> list[int]:
        """Where a person's sub-goal holds here of itself (the pots of this greenhouse hold soil),
        the sub-goals of theirs before it that were only the means to it: those about no thing the
        goal names and no place to be (the shovel held, the hole dug, the soil held). None where it
        is a place to be or names the goal's thing."""
        milestones = self.milestones or []
        reached = milestones[index]
        if reached.origin not in self.corrected or not _only_means(reached):
            return []
        return [i for i, m in enumerate(milestones[:index]) if m.origin == reached.origin and m.core and _only_means(m)]

    def _route(self, milestone: Milestone, observation: Observation, walk: bool) -> Plan | None:
        """The next step toward the sub-goal: the first action of its route, from where the route
        was left, that can be taken now (re-bound); with `walk`, else the way to the room it was
        taken in (in an episode of this very task), and for a sub-goal of being somewhere, the way there.
        A person's route (a correction) is not skipped past where its thing is elsewhere: a step on
        a thing the goal names seen in another room is the way there, one on things held is taken
        in the room the person took it in, and what is closed here is opened before a thing here
        stands in for one the step names."""
        p = self.planning
        binder = self.binders[milestone.origin]
        here = observation.location
        held = binder.holds(milestone.context, self._facts(observation), by_role=True)
        bound = held or {}
        route = milestone.steps
        along = self.along.get(id(milestone), 0)
        last = len(route) - 1
        # A person's route is taken in order: each of its steps was meant (the battery wired before the bulb).
        in_order = milestone.origin in self.corrected
        if route and not in_order and (held is not None or id(milestone) not in self.rewarded_first):
            # What held with the sub-goal holds now, or the route is not begun: the step that reached
            # it first, without what the exploration that found it did on the way (it ate a pepper
            # the recipe needed; a seed was focused on after forty draws that did nothing for it).
            window = [last, *range(along, min(along + LOOKAHEAD, last))]
        else:
            window = list(range(along, min(along + LOOKAHEAD, len(route))))
        for index in window:
            room, action = route[index]
            offset = index - along
            found = binder.binding(action, bound, observation.admissible)
            if found is None and in_order and room == here:
                found = binder.binding(action, bound, observation.admissible, stand_in=True)
                closed = self._closed_here(observation) if found is not None else []
                if closed:  # what the step names may be in there: opened first, the step not skipped
                    return self._plan(closed[0], milestone)
            if found is not None and in_order and room not in (None, here) and self._carried(found[1], binder) \
                    and p.settings.domain.aimed_at(found[0]) is None:
                way = go_plan(room, p.state.observed)  # a held thing is put down where the person put it
                if way is not None:
                    return self._as_progress(way, milestone) if walk else None
            command = found[0] if found is not None else None
            early = index == last and held is None  # the rewarded step before its route: only where it can be taken
            if command is None and early:
                continue
            key = (id(milestone), along + offset)
            if command is None and self.heading == (*key, here):
                # Arrived where the route took this step, and it cannot be taken here: not sought there again.
                self.passed.add(key)
            if command is None and walk and room is not None and room != here and milestone.origin in self.same_task:
                step = self._toward(room, observation) if key not in self.passed else None
                if step is not None:
                    self.heading = (*key, room)
                    return self._plan(step, milestone)
                continue
            target = self._named_room(action, bound, binder) or self._person_room(room, action, milestone) \
                if command is None and in_order and key not in self.passed else None
            way = go_plan(target, p.state.observed) if target is not None else None
            if way is not None and target is not None:  # a person's step, on things elsewhere: gone to, never skipped
                if walk:
                    self.heading = (*key, target)
                return self._as_progress(way, milestone) if walk else None
            if command is not None and in_order and self.irrevocable.repeated([command], observation.scene_triples) \
                    and not self._renamed(command):
                again = self._again(milestone, route, index, bound, observation)
                if again is not None:
                    return again
                continue
            if command is None or command in p.state.lessons.fatal | self.avoided or self._idle(command, observation):
                continue
            # A person's step on what their own words name here, re-worded, is theirs to take (their
            # focus on the banana seed is one on this pear seed), unless it answers a branch.
            named = in_order and found is not None and binder.named_in(action, command, found[1])
            self.named = command if named else None
            if self._held_back(command, observation):
                command = command if named and not self._answers(command) else \
                    self._as_the_person_found(milestone, binder, command, observation) if in_order else None
                if command is None:
                    continue
                self.decided.add(command)
            if early:
                self.rewarded_first.add(id(milestone))  # once: its route may be what it needs
                return self._plan(command, milestone)
            self.along[id(milestone)] = along + offset
            self.offered = (id(milestone), command, binder, found[1] if found is not None else {})
            return self._plan(command, milestone)
        if not walk:
            return None
        rooms = [name for predicate, terms in milestone.core if predicate == AT for name in binder.candidates(terms[0])]
        step = next((s for s in (self._toward(room, observation) for room in rooms) if s is not None), None)
        return self._plan(step, milestone) if step is not None else None

    def _again(self, milestone: Milestone, route: tuple[RouteStep, ...], index: int, bound: Mapping[Term, str],
               observation: Observation) -> Plan | None:
        """A person's step on a thing already acted on so, as it is now (focused): the step of
        their route before it taken again, up to WAITS times, where it is no irrevocable step.
        The person waited, then focused the wolf grown; here the dove egg has not hatched yet."""
        if index == 0 or self.waited.get(id(milestone), 0) >= WAITS:
            return None
        before = self.binders[milestone.origin].command(route[index - 1][1], bound, observation.admissible)
        if before is None or self.planning.settings.domain.aimed_at(before) is not None:
            return None
        self.waited[id(milestone)] = self.waited.get(id(milestone), 0) + 1
        self.planning.state.awaiting = True
        return self._plan(before, milestone)

    def _named_room(self, action: LiftedAction, bound: Mapping[Term, str], binder: Binder) -> str | None:
        """Another room where a thing the goal names that the step is taken on was seen (the
        correction picked up its soap where it stood; the goal's sugar was seen in the workshop)."""
        observed = self.planning.state.observed
        for term in action[1]:
            if term.phrase is None:
                continue
            for name in [bound[term]] if term in bound else binder.candidates(term):
                for said in [said for said, canon in binder.names.items() if canon == name] or [name]:
                    room = observed.room_seen(said)
                    if room not in (None, observed.location):
                        return room
        return None

    def _person_room(self, room: str | None, action: LiftedAction, milestone: Milestone) -> str | None:
        """The room a step on things (not a way through) was taken in by a person who made what
        the goal names, in a family of rooms joined by ways: their route is the recipe, and the cup
        they took from the kitchen's cupboard is sought there, not skipped for the recipe in the
        workshop. (Another's steps are taken where they can be: the pot the person fetched from the
        cupboard is the cup that holds the mercury here.)"""
        domain = self.planning.settings.domain
        if milestone.origin not in self.makers or domain.leads_to is None \
                or all(domain.is_passage(term.name) for term in action[1]):
            return None
        return room

    def _carried(self, binding: Mapping[Term, str], binder: Binder) -> bool:
        """Every thing the step is taken on is held: where it is taken is what it changes."""
        held = {binder.names.get(name, name) for name in self.planning.state.observed.held}
        return bool(binding) and set(binding.values()) <= held

    def _closed_here(self, observation: Observation) -> list[str]:
        """The steps that open what is closed here (but ways through), one a thing; none left: what
        is not seen here is not here."""
        observed, domain = self.planning.state.observed, self.planning.settings.domain
        here = {s for s, _, _ in observation.scene_triples}
        steps = (opening(thing, observation.admissible, observed) for thing in sorted(here & observed.closed)
                 if not domain.is_passage(thing))
        return [step[0] for step in steps if step]

    def _person_s(self, milestone: Milestone, observation: Observation) -> Plan | None:
        """The next step of the route of a person who made what the goal names (a search for it
        is moot), or the way to where it is taken."""
        if milestone.origin not in self.makers:
            return None
        return self._route(milestone, observation, walk=False) or self._route(milestone, observation, walk=True)

    def _named_here(self, milestone: Milestone, observation: Observation) -> Plan | None:
        """The next step of a person's route where it is taken on things their own words name
        here (`Binder.named_in`): what a search seeks is at hand (the goal's "pear plant" is
        nothing's name; the person's "banana seed" is this "pear seed", there to focus on)."""
        if milestone.origin not in self.corrected:
            return None
        along, offered = dict(self.along), self.offered
        plan = self._route(milestone, observation, walk=False)
        if plan is not None and plan.steps[0] == self.named:
            return plan
        self.along, self.offered = along, offered
        return None

    def _known_way(self, milestone: Milestone, observation: Observation) -> Plan | None:
        """For a sub-goal of being in a room, learned in an episode of this very task (the same
        house): the first move of the way there on the map of rooms its episodes walked."""
        if milestone.origin not in self.same_task:
            return None
        binder = self.binders[milestone.origin]
        rooms = [name for predicate, terms in milestone.core if predicate == AT for name in binder.candidates(terms[0])]
        step = next((s for s in (self._toward(room, observation) for room in rooms) if s is not None), None)
        return self._plan(step, milestone) if step is not None else None

    def _toward(self, room: str, observation: Observation) -> str | None:
        """The first move of the way to `room` by the rooms the stored episodes went through (or the
        door to open before it), None where no way is known or its move cannot be taken now."""
        domain = self.planning.settings.domain
        here = observation.location
        if here is None or room == here:
            return None
        came: dict[str, tuple[str, str] | None] = {here: None}
        queue = [here]
        while queue and room not in came:
            at = queue.pop(0)
            for (start, move, end) in self.ways:
                if start == at and end not in came:
                    came[end] = (at, move)
                    queue.append(end)
        if room not in came:
            return None
        hop, step = room, came[room]
        while step is not None and step[0] != here:
            hop, step = step[0], came[step[0]]
        if step is not None and step[1] in observation.admissible:
            return step[1]
        doors = [way for way, relation, to in observation.scene_triples if relation == domain.leads_to and to == hop]
        opening = [domain.open_action.format(door) for door in doors]
        return next((action for action in opening if action in observation.admissible), None)

    def _wait(self, milestone: Milestone, observation: Observation) -> Plan | None:
        """The route's last action again, up to WAITS times, once the whole route was taken and
        what held when the sub-goal was reached holds again: a change that takes time (the
        chocolate melting on the stove lit) came after steps that changed nothing else."""
        route = milestone.route
        if not route or not milestone.context or self.along.get(id(milestone), 0) < len(route):
            return None
        if self.waited.get(id(milestone), 0) >= WAITS:
            return None
        binder = self.binders[milestone.origin]
        state = self._facts(observation)
        bound = binder.holds(milestone.context, state, by_role=True)
        command = binder.command(route[-1][1], bound, observation.admissible) if bound is not None else None
        if command is None or bound is None or self._held_back(command, observation):
            return None
        self.waited[id(milestone)] = self.waited.get(id(milestone), 0) + 1
        return self._plan(command, milestone)

    def _held_back(self, command: str, observation: Observation) -> bool:
        """An irrevocable step on what the goal does not name, or one answering a conditional
        branch not yet decided ("move it to the red box"), as the LLM's steps are held back
        (prag.agent.skills.irrevocable): another variation's route took it for its own answer."""
        p = self.planning
        window = p.settings.config.gamble_window
        # Acted on so already, as the scene marks it, but at another stage since: the person's next focus.
        grown = [command] if self._renamed(command) else []
        return command in self.irrevocable.deferred([command], p.goal.sentence, observation, p.state.t, p.state.max_steps,
                                                    window, grown)

    def _answers(self, command: str) -> bool:
        """Whether `command` answers one of the goal's conditional branches (a focus on the box it
        names, a thing put in it)."""
        goal, domain = self.planning.goal.sentence, self.planning.settings.domain
        return domain.aimed_at(command) in answer_targets(goal, domain.irrevocable) \
            or any(into(command, place) for place in answer_places(goal))

    def _as_the_person_found(self, milestone: Milestone, binder: Binder, command: str,
                             observation: Observation) -> str | None:
        """A person's answer to the goal's conditional branch, held back as a guess, decided by
        what the person saw: where what their route acted on (re-bound as the steps here were) is
        in the states it was in when they answered, their branch; where it is not, the other
        (their apricot left the motor and the wires off and went to the orange box; here the
        substance lit the bulb: the other box); None where nothing they acted on shows a state here
        to tell by, there are more branches, or the branches compare a quantity (`read_off`)."""
        if read_off(self.planning.goal.sentence):
            return None
        now = self._facts(observation)
        known = {name for fact in now for name in fact[1:]}
        compared = [(states, here) for t, states in milestone.evidence if t in binder.kept
                    and (here := states_of(whole(binder.kept[t], known), now))]  # what shows no state tells nothing
        if not compared:
            return None
        if all(then == here for then, here in compared):
            return command
        places = answer_places(self.planning.goal.sentence)
        answered = [place for place in places if into(command, place)]
        others = places - set(answered)
        if len(answered) != 1 or len(others) != 1:
            return None
        other = command[:-len(answered[0])] + next(iter(others))
        return other if other in observation.admissible else None

    def _idle(self, command: str, observation: Observation) -> bool:
        """Taken from this very observation and scene before (`loop_limit` times): the world would
        answer the same (a stove that will not light)."""
        p = self.planning
        return p.state.tried[(observation.text, observation.scene_text, command)] >= p.settings.config.loop_limit

    def _plan(self, step: str, milestone: Milestone) -> Plan:
        return Plan((step,), StepSource.PROGRESS, milestone.origin, goal=self.planning.goal.sentence)

    @staticmethod
    def _as_progress(plan: Plan, milestone: Milestone) -> Plan:
        """A skill's plan (a way, a search) taken toward the sub-goal: this source's, from its episode."""
        return Plan(plan.steps, StepSource.PROGRESS, milestone.origin, goal=plan.goal)

    def _facts(self, observation: Observation) -> frozenset[Fact]:
        return self._read(observation)[0]

    def _read(self, observation: Observation) -> tuple[frozenset[Fact], dict[str, str]]:
        """The facts `observation` shows and its names (`facts_of`), read once however many
        sub-goals and routes ask."""
        if self._read_of is None or self._read_of[0] is not observation:
            self._read_of = (observation, facts_of(StepRecord.of(0, None, observation), self.planning.settings.domain))
        return self._read_of[1]

    def _searched(self, milestone: Milestone, observation: Observation) -> Plan | None:
        """Means-ends search to the sub-goal's core on the action model learned from the store,
        where the family gives none (the cup is on the counter this time, not where the route took it from)."""
        model = self.planning.settings.world_model
        if model is None or not milestone.core or any(p == AT for p, _ in milestone.core):
            return None
        p = self.planning
        return to_facts(as_goal(milestone.core), p.state.observed, observation.admissible, p.settings.domain, model,
                        source=StepSource.PROGRESS)

    def _carry(self, milestone: Milestone, observation: Observation) -> Plan | None:
        """For a thing to be in a place (the rubber in the metal pot, in another room): the family's
        verb that readies moving it while it is not held (`Domain.readies`), else the way to the
        place's room, then its put (`Domain.put`)."""
        p = self.planning
        domain, observed = p.settings.domain, p.state.observed
        binder = self.binders[milestone.origin]
        taken = [step.action for step in p.state.steps]
        for predicate, (thing, place) in ((f, t) for f, t in milestone.core if f == PLACED and len(t) == 2):
            things, places = binder.candidates(thing), binder.candidates(place)
            held = [name for name in observed.held if binder.names.get(name, name) in things]
            if not held:
                for name in (n for n, canon in binder.names.items() if canon in things):
                    step = readying(domain, name, observation, taken)
                    if step is not None:
                        return self._plan(step, milestone)
                continue
            put = ((domain.put or "").replace("{thing}", "{0}").replace("{place}", "{1}"), (thing, place))
            command = binder.command(put, {thing: binder.names.get(held[0], held[0])}, observation.admissible) \
                if domain.put else None
            if command is not None and not self._held_back(command, observation):
                return self._plan(command, milestone)
            for name in places:
                plan = go_plan(observed.room_seen(name), observed)
                if plan is not None:
                    return self._as_progress(plan, milestone)
        return None

    def _find(self, milestone: Milestone, observation: Observation) -> Plan | None:
        """For the sub-goal's things not seen yet in this episode, and those of its route's next
        step: a closed thing here opened (the metal pot may be in the cupboard; a thing that stands
        in for one nowhere here is chosen once nothing here is left to open), else the find-X
        skill for their kinds."""
        observed = self.planning.state.observed
        binder = self.binders[milestone.origin]
        route = milestone.steps
        along = self.along.get(id(milestone), 0)
        next_step = route[along][1][1] if along < len(route) else ()
        terms = [t for _, facts in milestone.core for t in facts] + list(next_step)
        unseen = [t.kind for t in terms if not binder.candidates(t) and t not in binder.kept]
        if not unseen:
            return None
        opened = self._closed_here(observation)
        if opened:
            return self._plan(opened[0], milestone)
        # Not every closed thing in the house: another sub-goal's route may know where it is. The
        # rooms the route took its steps in first.
        rooms = [room for room, _ in milestone.steps if room is not None]
        plan = find_plan(list(dict.fromkeys(unseen)), observed, self.places, containers=False, rooms=rooms)
        return self._as_progress(plan, milestone) if plan is not None else None

    def _back_to(self, milestone: Milestone) -> Plan | None:
        """The way back to where a thing of the sub-goal was seen, where it is not here nor held.
        A sub-goal whose things are all at hand or held and that no step reaches is left to the
        other sources (search, the LLM) as it is."""
        observed = self.planning.state.observed
        binder = self.binders[milestone.origin]
        held = {binder.names.get(name, name) for name in observed.held}
        for _, terms in milestone.core:
            for term in terms:
                for name in binder.candidates(term):
                    if name in held:
                        continue
                    plan = go_plan(observed.room_seen(name), observed)
                    if plan is not None:
                        return self._as_progress(plan, milestone)
        return None


def _only_means(milestone: Milestone) -> bool:
    """A sub-goal about no thing the goal names and no place to be."""
    return all(predicate != AT and all(t.phrase is None for t in terms) for predicate, terms in milestone.core)


def _as_pattern(template: str) -> re.Pattern[str]:
    """A family's command template ("pour {thing} into {place}") as a regex with those groups."""
    return re.compile(re.escape(template).replace(r"\{thing\}", "(?P<thing>.+)").replace(r"\{place\}", "(?P<place>.+)"))
