"""The search source's plans: the first step the skills its family declares give for the goal's
words (`Domain.skills`, prag.agent.skills.repertoire: an instruction's irrevocable step once its
thing is in view, a branch decided, a carry, find-X for an instruction's thing, ...), else the
goal's sub-goals where it spells a route, else find-X while a thing the goal needs is unseen, else
means-ends search on what was seen. Search is also where a reading is found wrong: it revises the
goal (prag.agent.goals.goal) and plans for the next."""
from __future__ import annotations

from collections import Counter
from typing import ClassVar

from prag.agent.plans import Plan
from prag.agent.proposal import Proposal, Standing, View
from prag.agent.skills.carry import Carry
from prag.agent.skills.conditions import Conditions, branches
from prag.agent.skills.described import DescribedThings
from prag.agent.skills.explore import find_plan, missing, seek_plan
from prag.agent.skills.instructed import Instructed, sentences
from prag.agent.skills.making import Making
from prag.agent.skills.repertoire import declared
from prag.agent.skills.skill import Instructions, Turn
from prag.agent.sources.plan_source import Planning
from prag.agent.world.places import LLMPlaces, Places
from prag.agent.world.search import means_ends, to_facts
from prag.envs.base import Observation
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
        self.skills = declared(s.domain)
        self.restart()

    def restart(self) -> None:
        p, s = self.planning, self.planning.settings
        self._searched_at = 0
        goal = p.goal.sentence
        self.work = Instructions(
            goal, s.domain, self.places, s.config.gamble_window, s.later, Instructed(goal, s.domain), Carry(goal, s.domain),
            Conditions(s.llm, p.llm_step.usage, branches(sentences(goal)), s.seed), Making(s.domain), self.described)

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
        if self.skills:
            turn = Turn.start(observation, p.state, self.work)
            plan = next((plan for skill in self.skills if (plan := skill(turn)) is not None), None)
            if plan is not None:
                return Proposal.of(plan)
        subgoals = p.goal.subgoals
        step = subgoals.step(observation) if subgoals is not None else None
        if step is not None:  # the goal spells its route: its next sub-goal, or what readies it
            return Proposal.of(self.work.step(step))
        if subgoals is not None and subgoals.current is not None and p.settings.domain.relative_moves:
            # Its command cannot be taken here and nothing here readies it: the map finds where it can.
            return Proposal.of(seek_plan(subgoals.current.command, subgoals.at, p.state.observed))
        return Proposal.of(self._plan(observation))

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
