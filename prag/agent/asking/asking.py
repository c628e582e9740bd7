"""When the mediator asks: the chain's last sources, the LLM and the person (Soar ITL's
instruction and confirmation), and what the person's words and answers cost them. To the arbiter
(prag.agent.sources.arbiter) they are one asked source, whose plans are guesses."""
from __future__ import annotations

from typing import ClassVar

from prag.agent.asking.llm_step import LLMStep, normalise
from prag.agent.config import AgentConfig
from prag.agent.person import Person
from prag.agent.plans import Plan
from prag.agent.proposal import Proposal, Standing, View
from prag.agent.protocol import Decision
from prag.agent.world.state import EpisodeState
from prag.envs.base import Observation
from prag.sources import KnowledgeSource, StepSource
from prag.store.episode_extra import Effort


class Asking:
    """The LLM's step, confirmed by the person when one is given, or the person's words."""

    standing: ClassVar[Standing] = Standing.GUESSED

    def __init__(self, llm_step: LLMStep, person: Person | None, config: AgentConfig, state: EpisodeState,
                 effort: Effort) -> None:
        self.llm_step = llm_step
        self.person = person
        self.config = config
        self.state = state
        self.effort = effort  # what the person's instructions and yes/no answers cost them

    def hear(self, text: str) -> None:
        """The person says something: it joins the history after the latest observation."""
        self.state.hear(text)
        self.effort.said(text)

    def restart(self) -> None:
        """Nothing to forget: each ask is answered afresh."""

    def propose(self, view: View) -> Proposal:
        """The step chosen now, and with `plan_length` > 1 the LLM's plan for after it (the
        actions its answer planned after the one taken)."""
        decision, planned = self.ask(view.observation)
        guessed = self.config.plan_length > 1 and decision.valid
        plans = (Plan(tuple(planned), StepSource.LLM, goal=self.llm_step.goal.sentence),) if guessed else ()
        return Proposal(plans, decision=decision)

    def ask(self, observation: Observation) -> tuple[Decision, list[str]]:
        """The LLM (its proposals confirmed by the person when one is given), or without the LLM,
        the person's words. Words naming no admissible action leave the step to the LLM all the
        same: something must be done."""
        if KnowledgeSource.LLM in self.config.sources or self.person is None:
            return self._llm_or_person(observation)
        words = (self.person.instruct(observation) or "").strip()
        taken = self._follow_words(words, observation) if words else None
        return (taken, []) if taken is not None else self.llm_step.choose_step(observation)

    def _llm_or_person(self, observation: Observation) -> tuple[Decision, list[str]]:
        """The LLM's answer and the actions it plans after it; with a person present, confirmed by
        them (Soar ITL): a proposal they reject is not offered again at this step and the LLM is
        asked again; after `max_rejections` in a row they are asked for the step in words. Words
        naming an admissible action choose it (source "person"); other words are heard, as `hear`
        does, and the LLM is asked again. With a person, the LLM's further planned actions are
        dropped: each step the LLM chooses is proposed to them. Without the LLM among the sources
        the person is asked for every step in words (Soar ITL's instruction only)."""
        person = self.person
        if person is None:
            return self.llm_step.choose_step(observation)
        proposes = KnowledgeSource.LLM in self.config.sources
        rejected: set[str] = set()
        in_a_row = 0
        while True:
            exhausted = not set(observation.admissible) - rejected
            if in_a_row >= self.config.max_rejections or exhausted or not proposes:
                in_a_row = 0
                words = (person.instruct(observation) or "").strip()
                taken = self._follow_words(words, observation) if words else None
                if taken is not None:
                    return taken, []
                if not words or exhausted or not proposes:
                    # Nothing said, or nothing left to propose, or no LLM to propose anything: the
                    # LLM's answer (the words heard) stands unconfirmed, as the last resort.
                    decision, _ = self.llm_step.choose_step(observation, frozenset() if exhausted else frozenset(rejected))
                    return decision, []
            decision, _ = self.llm_step.choose_step(observation, frozenset(rejected))
            reply = person.confirm(decision.action, observation)
            if isinstance(reply, str):  # words instead of yes/no
                taken = self._follow_words(reply, observation)
                if taken is not None:
                    return taken, []
                continue
            self.effort.answered()
            if reply:
                return decision, []
            rejected.add(decision.action)
            in_a_row += 1

    def _follow_words(self, words: str, observation: Observation) -> Decision | None:
        """The person's words: the admissible action they name (chosen by the person), else None
        after hearing them as an utterance."""
        action = {normalise(a): a for a in observation.admissible}.get(normalise(words))
        if action is not None:
            self.effort.said(words)
            return Decision(action, source=StepSource.PERSON)
        self.hear(words)
        return None
