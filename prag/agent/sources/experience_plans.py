"""The experience source's plans: the successes among a wider retrieval than the prompt's, and
the corrections retrieved for the instructions (prag.agent.sources.past_episodes ranks them), proven. What the same
episodes teach besides (the actions that failed this task, what its instructions name, ...) is
learned once for every source (prag.agent.sources.lessons), not here."""
from __future__ import annotations

from typing import ClassVar

from prag.agent.proposal import Proposal, Standing, View
from prag.agent.sources.past_episodes import ThisTask, candidates, proposed
from prag.agent.sources.plan_source import Planning
from prag.envs.base import Observation
from prag.sources import KnowledgeSource


class ExperiencePlans:
    """Plans from experience, proposed at the first step, after a revision, or when the plan
    being followed ran out; once per step."""

    standing: ClassVar[Standing] = Standing.PROVEN

    def __init__(self, planning: Planning) -> None:
        self.planning = planning
        self._offered_at = 0  # the step (history length) plans were last offered at

    def restart(self) -> None:
        self._offered_at = 0

    def propose(self, view: View) -> Proposal | None:
        t = self.planning.state.t
        due = t == 1 or self._offered_at == 0 or (view.plan is not None and view.left == 0)
        if not due or self._offered_at == t:
            return None
        self._offered_at = t
        return self._plans(view.observation)

    def _plans(self, observation: Observation) -> Proposal | None:
        p, s = self.planning, self.planning.settings
        if s.experiences is None and s.corrections is None:
            return None
        p.llm_step.retrieve_corrections(observation.scene_text)
        pool = (
            s.experiences.retrieve(p.goal.sentence, observation.scene_text, s.visibility, k=s.config.plan_pool)
            if s.experiences is not None else []
        )
        # Another task's episode walks to where things were then, in its own room or another (ALFWorld's
        # rooms show the same receptacles whatever the objects): where search is a source it serves
        # that task better (after training on valid_train, following them cost valid_seen 2.5 steps
        # a game and a game).
        task = ThisTask.of(p.goal.sentence, p.first, s.domain, p.goal.instruction)
        plans = candidates(task, pool, p.llm_step.correction_pool, only_this_task=KnowledgeSource.SEARCH in s.config.sources,
                           progress=KnowledgeSource.PROGRESS not in s.config.sources)
        return proposed(plans)
