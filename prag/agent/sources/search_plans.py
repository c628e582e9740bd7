"""The search source's plans: the irrevocable steps the goal instructs once their things are in
view (prag.agent.skills.instructed), the goal's sub-goals where it spells a route, the find-X skill
while a thing the goal needs is unseen, else means-ends search on what was seen. Search is also
where a reading is found wrong: it revises the goal (prag.agent.goals.goal) and plans for the next."""
from __future__ import annotations

import re
from collections import Counter
from typing import ClassVar

from prag.agent.plans import Plan
from prag.agent.skills.carry import Carry, readying
from prag.agent.skills.compared import Experiment, comparative, orientation
from prag.agent.skills.conditions import Conditions, branches
from prag.agent.skills.described import DescribedThings, called, things_by_room
from prag.agent.skills.explore import find_plan, go_plan, missing, opening, seek_plan
from prag.agent.skills.instructed import Instructed, instructed, is_a, sentences
from prag.agent.skills.irrevocable import gambling
from prag.agent.skills.making import Making, made, named_parts, recipes
from prag.agent.sources.plan_source import Planning
from prag.agent.proposal import Proposal, Standing, View
from prag.agent.world.places import LLMPlaces, Places
from prag.agent.world.search import means_ends, to_facts
from prag.envs.base import Observation, Triple
from prag.envs.sam import ActionModel
from prag.sources import StepSource


class SearchPlans:
    """Search, once per step, when no plan from experience has a step to take. A means-ends plan
    is kept while its next step can be taken; a find plan is made anew each step, so that it ends
    as soon as what it seeks is seen."""

    standing: ClassVar[Standing] = Standing.SEARCHED

    def __init__(self, planning: Planning) -> None:
        self.planning = planning
        s = planning.settings
        guess = LLMPlaces(s.llm, planning.llm_step.usage, s.seed) if "llm" in s.config.places else None
        self.places = Places(s.domain, s.config.places, s.ranking, guess)
        # The learned model is planned with where the config asks for it (none learned yet:
        # nothing to plan with) or the family has none given.
        learned = s.world_model or ActionModel(s.domain.name)
        self.world_model = learned if s.config.action_model == "learned" or s.domain.action_model is None else None
        self._searched_at = 0  # the step (history length) search was last consulted at
        self.described = DescribedThings(s.llm, planning.llm_step.usage, s.seed)
        self.restart()

    def restart(self) -> None:
        p = self.planning
        self._searched_at = 0
        self.instructed = Instructed(p.goal.sentence, p.settings.domain)
        self.carry = Carry(p.goal.sentence, p.settings.domain)
        self.conditions = Conditions(p.settings.llm, p.llm_step.usage, branches(sentences(p.goal.sentence)),
                                     p.settings.seed)
        self.experiment: Experiment | None = None
        self.making = Making(p.settings.domain)
        self.made: list[str] = []  # what the episode's combinations made (prag.agent.skills.making)

    def propose(self, view: View) -> Proposal | None:
        p, observation = self.planning, view.observation
        if self._searched_at == p.state.t:
            return None
        self._searched_at = p.state.t
        if view.plan is not None and view.plan.source == StepSource.SEARCH and view.left == 0:
            # The plan for the reading ran out and the game goes on: the reading cannot be right.
            p.revise("its plan ran out and the game was not won", {})
        if view.plan is not None and view.plan.source == StepSource.SEARCH and view.step_now():
            return None
        plan = self._instructions(observation)
        if plan is not None:
            return Proposal.of(plan)
        subgoals = p.goal.subgoals
        step = subgoals.step(observation) if subgoals is not None else None
        if step is not None:  # the goal spells its route: its next sub-goal, or what readies it
            return Proposal.of(self._subgoal(step))
        if subgoals is not None and subgoals.current is not None and p.settings.domain.relative_moves:
            # Its command cannot be taken here and nothing here readies it: the map finds where it can.
            return Proposal.of(seek_plan(subgoals.current.command, subgoals.at, p.state.observed))
        return Proposal.of(self._plan(observation))

    def _instructions(self, observation: Observation) -> Plan | None:
        """The step toward what the goal's instructions say, in their order (the skills'), or None
        where they say nothing to do now."""
        p = self.planning
        self.instructed.heed(p.state.lessons.verified)
        wanted = self._to_make()  # "the intermediate paint you created": a part of what is to be made
        self.made = made(self._scenes(), p.settings.domain)
        self.instructed.made = set(self.made) & set(named_parts(wanted) if wanted else ())
        taken = [step.action for step in p.state.steps]
        plan = self._instructed(observation, taken)
        if plan is not None:  # "First, focus on the thermometer": it is in view
            return plan
        sought = self.instructed.next
        if sought is not None or self.conditions.open:
            plan = self._take_along(observation, taken)
            if plan is not None:
                return plan
        if self.instructed.left and self.instructed.left[0].made:  # "the paint you created": made, not sought
            plan = self._make(observation)
            if plan is not None:
                return plan
            sought = None
        if sought is None and self.conditions.open:  # "If it is above -50 degrees, place it in the blue box"
            plan = self._decide(observation) or self._instructed(observation, taken)
            if plan is not None:
                return plan
            sought = self.instructed.next
        if sought is None:  # "Then, move it to the purple box"
            plan = self._carry(observation, taken)
            if plan is not None:
                return plan
        if sought is not None and not missing(p.state.observed):  # not in view: find-X walks to where it may be
            observed = p.state.observed
            seen_in = observed.room_seen(sought)  # seen before it was its turn: back there first
            found = go_plan(seen_in, observed) or find_plan([sought], observed, self.places)
            # "a(n) animal": the words named nothing in any place (find-X may also find none it can
            # reach for a step, before a door is opened)
            if found is None and not observed.to_search():
                plan = self._measure(observation) or self._make(observation)
                if plan is not None:
                    return plan
            if found is None and not observed.to_search() and self._choose_described():
                plan = self._instructed(observation, taken)
                if plan is not None:
                    return plan
                sought = self.instructed.next or sought
                found = go_plan(observed.room_seen(sought), observed)  # the thing chosen: back to where it was seen
            if found is not None:
                return found
        return None

    def _subgoal(self, step: str) -> Plan:
        """One step the goal's words call for."""
        return Plan((step,), StepSource.SUBGOAL, goal=self.planning.goal.sentence)

    def _instructed(self, observation: Observation, taken: list[str | None]) -> Plan | None:
        """The step the next instruction calls for, where its thing is in view."""
        step = self.instructed.step(observation, taken)
        return self._subgoal(step) if step is not None else None

    def _take_along(self, observation: Observation, taken: list[str | None]) -> Plan | None:
        """A thing focused on while the goal has more to do is taken along (the thermometer, to
        measure the substance focused on next): the family's verb that readies a move
        (`Domain.readies`), once a thing."""
        domain = self.planning.settings.domain
        for thing in domain.marked_things(observation.scene_triples):
            ready = readying(domain, thing, observation, taken)
            if ready is not None:
                return self._subgoal(ready)
        return None

    def _decide(self, observation: Observation) -> Plan | None:
        """Decide the goal's conditional branch (prag.agent.skills.conditions) by what was measured or
        by the one the store's failures left, else the step the LLM says measures it, else,
        where a gamble may be taken now (prag.agent.skills.irrevocable), by what the LLM knows or a draw;
        the branch taken becomes the next instruction. The measuring step, or None."""
        p = self.planning
        domain, goal = p.settings.domain, p.goal.sentence
        steps = [(step.action, step.observation, step.graph) for step in p.state.steps]
        branch = self.conditions.measured(steps, domain) or self.conditions.ruled_out(p.state.lessons.failed_things)
        if branch is None:
            named = instructed(goal, domain)
            step = self.conditions.measuring(observation.admissible, named, domain, observation.scene_triples)
            if step is not None:
                return self._subgoal(step)
            left = self.conditions.left(p.state.lessons.failed_things)
            if left and gambling(observation, p.state.t, p.state.max_steps, p.settings.config.gamble_window,
                                 chance=1 / len(left)):
                branch = self.conditions.known(named[-1] if named else None) or self.conditions.drawn(left, goal)
        if branch is not None and not self.instructed.instruct(branch.instruction):
            self.carry.instruct(branch.instruction)
        return None

    def _choose_described(self) -> bool:
        """Where the next instruction describes its thing and every place was searched for the
        words, the thing the LLM chooses for it among those seen (prag.agent.skills.described); whether
        one was chosen."""
        target = self.instructed.described
        if target is None or target.description is None:
            return False
        state = self.planning.state
        observed, failed = state.observed, state.lessons.failed_things
        described = comparative(target.description)
        chosen = None
        if self.experiment is not None and described is not None:
            chosen = self.experiment.choice(self._steps(), described, orientation(state.lessons.orientations, described))
        chosen = chosen or self.described.choose(target.description, target.head, self.planning.goal.sentence,
                                                 observed, failed, state.lessons.answers.get(target.description))
        if chosen is not None:  # by its own name, which stays while the words for it change as it grows
            self.instructed.mean(observed.own_names.get(chosen, chosen))
        return chosen is not None

    def _measure(self, observation: Observation) -> Plan | None:
        """Where the next instruction's description is a degree of a property ("the inclined plane
        with the most friction") and two or more things seen are what it describes, the next step of
        the experiment that measures them alike (prag.agent.skills.compared), or the way to their room.
        Measured in every episode, so that its outcome teaches which
        way the measurement reads where experience does not say yet."""
        target = self.instructed.described
        described = comparative(target.description) if target is not None else None
        if described is None:
            return None
        p = self.planning
        observed, passed = p.state.observed, p.state.lessons.failed_things
        if self.experiment is None:
            candidates = [thing for thing in called(described.head, things_by_room(observed))
                          if thing not in passed and observed.own_names.get(thing, thing) not in passed]
            if len(candidates) < 2:
                return None
            self.experiment = Experiment(candidates, p.settings.domain)
        step = self.experiment.step(self._steps(), observation.admissible)
        if step is not None:
            return self._subgoal(step)
        return go_plan(observed.seen_from.get(self.experiment.candidates[0]), observed) if not self.experiment.done(
            self._steps()) else None

    def _make(self, observation: Observation) -> Plan | None:
        """Where the goal names a thing to focus on that is nowhere (every place was searched),
        the next step of making it from things of its kind (prag.agent.skills.making); where none can be
        tried here, a closed thing here opened (a second cup of yellow paint in the cupboard), a
        search of the places not yet searched for more of its kind, or the way back to where such
        things were seen; None where nothing is to be made."""
        p = self.planning
        observed, domain = p.state.observed, p.settings.domain
        wanted = self._to_make()
        if wanted is None or domain.combine is None:
            return None
        known = [*p.state.lessons.recipes, *recipes(self._scenes(), domain)]
        step = self.making.step(wanted, observation.scene_triples, observation.admissible, known, self.made)
        plan = self._subgoal(step) if step is not None else None
        if plan is None:  # nothing to try here: more things of its kind where not yet searched, or where seen
            head = wanted.split()[-1]
            kin = [thing for thing in observed.seen if is_a(observed.own_names.get(thing, thing).lower(), head)]
            here = {s for s, _, _ in observation.scene_triples}
            closed = [step for thing in sorted(here & observed.closed) for step in opening(thing, observation.admissible, observed)
                      if not re.fullmatch(domain.passage or "$^", thing)]
            plan = (Plan(tuple(closed[:1]), StepSource.FIND, goal=p.goal.sentence) if closed else None) or find_plan(
                [head], observed, self.places) or (
                None if here & set(kin) else go_plan(next((observed.seen_from[t] for t in kin if t in observed.seen_from), None),
                                                     observed))
        return plan

    def _to_make(self) -> str | None:
        """The next thing the instructions name, by its name, that no thing seen is called (one
        made earlier in the episode, a "paint you created", waits for it)."""
        observed = self.planning.state.observed
        for target in self.instructed.left:
            if target.made:
                continue
            if target.description is not None or target.kind or target.about is not None:
                return None
            seen = {name.lower() for name in (*observed.seen, *observed.own_names.values())}
            return None if target.words in seen else target.words
        return None

    def _scenes(self) -> list[tuple[str | None, list[Triple]]]:
        return [(step.action, step.graph) for step in self.planning.state.steps]

    def _steps(self) -> list[tuple[int, str | None, str]]:
        return [(t, step.action, step.observation) for t, step in enumerate(self.planning.state.steps)]

    def _carry(self, observation: Observation, taken: list[str | None]) -> Plan | None:
        """The step the goal's carry instruction calls for (prag.agent.skills.carry): the carry or
        what readies it where it can be taken, else the way to the room it names (or where its place
        was seen) or a search for its place while the thing is held."""
        step = self.carry.step(observation, taken)
        if step is not None:
            return self._subgoal(step)
        order = self.carry.seeking(observation, taken)
        if order is None:
            return None
        observed = self.planning.state.observed
        # The room it names, else where the place was seen, else a search for the place.
        return go_plan(order.room or observed.room_seen(order.place), observed) or find_plan([order.place], observed, self.places)

    def _plan(self, observation: Observation) -> Plan | None:
        """A find plan for what the reading needs and was not seen, else a means-ends plan;
        revising the reading where what was seen shows it cannot be right."""
        p = self.planning
        observed = p.state.observed
        targets = missing(observed, self._needs())
        unsaid = p.goal.unsaid(observed)
        if unsaid:  # "turn on a lamp": the room shows a desk lamp, the reading said floor lamp
            p.revise(f"no {', '.join(unsaid.values())} seen, another of its kind is", unsaid)
            targets = missing(observed, self._needs())
        plan = find_plan(targets, observed, self.places) if targets else None
        if targets and plan is None and not observed.to_search():
            # Every place was searched and what the reading needs is nowhere.
            reading = p.goal.readings.current
            slots = dict(reading.goal.slots) if reading is not None and reading.goal is not None else {}
            p.revise(f"no {', '.join(targets)} anywhere in the room", {s: v for s, v in slots.items() if v in targets})
            targets = missing(observed, self._needs())
            plan = find_plan(targets, observed, self.places) if targets else None
        if plan is None:
            plan = self._means_ends(observation)
        if plan is None and not targets and p.goal.readings.current is not None and self._plans_are_evidence():
            # All the reading needs was seen and search finds no way to its goal ("clean" a soap
            # bottle the world cannot clean): the reading cannot be right.
            goal = p.goal.sentence
            p.revise("search finds no plan for it from what was seen", {})
            if p.goal.sentence != goal:
                targets = missing(observed, self._needs())
                plan = find_plan(targets, observed, self.places) if targets else None
                plan = plan or self._means_ends(observation)
        return plan

    def _needs(self) -> dict[str, int]:
        """The kinds the goal read needs, and how many of each: the family's templates say it for
        its own sentences, the facts themselves for a reading in open vocabulary."""
        p = self.planning
        facts = p.goal.facts
        if p.goal.readings.current is None or p.goal.readings.current.goal is not None or facts is None:
            return p.settings.domain.needs(p.goal.sentence)
        return dict(Counter(facts.kinds))

    def _plans_are_evidence(self) -> bool:
        """Whether search finding no plan says the reading is wrong: with the family's own action
        model it does; with one learned from the store it does not (round 0's is empty, and a
        model learned from few episodes plans little: "take coin" read right was dropped so)."""
        return self.world_model is None and self.planning.settings.domain.action_model is not None

    def _means_ends(self, observation: Observation) -> Plan | None:
        p = self.planning
        facts = p.goal.facts if p.goal.readings.current is not None and p.goal.readings.current.goal is None else None
        if facts is not None:
            return to_facts(facts, p.state.observed, observation.admissible, p.settings.domain, self.world_model)
        return means_ends(p.goal.sentence, p.state.observed, observation.admissible, p.settings.domain, learned=self.world_model)
