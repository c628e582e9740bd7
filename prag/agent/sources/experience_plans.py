"""The experience source's plans: the successes among a wider retrieval than the prompt's, and
the corrections retrieved for the instructions (prag.agent.sources.actor ranks them). What the same
episodes teach besides (the actions that failed this task, what its instructions name, ...) is
learned once for every source (prag.agent.sources.lessons), not here."""
from __future__ import annotations

from prag.agent.sources.actor import ThisTask, candidates
from prag.agent.sources.plan_source import Planning
from prag.envs.base import Observation
from prag.sources import KnowledgeSource


class ExperiencePlans:
    """Plans from experience, offered at the first step, after a revision, or when the plan
    being followed ran out; once per step."""

    def __init__(self, planning: Planning) -> None:
        self.planning = planning
        self._offered_at = 0  # the step (history length) plans were last offered at

    def restart(self) -> None:
        self._offered_at = 0

    def offer(self, observation: Observation) -> None:
        follower = self.planning.actor.follower
        t = self.planning.state.t
        due = t == 1 or self._offered_at == 0 or (follower is not None and follower.left == 0)
        if due and self._offered_at != t:
            self._offered_at = t
            self._offer_plans(observation)

    def _offer_plans(self, observation: Observation) -> None:
        p, s = self.planning, self.planning.settings
        if s.experiences is None and s.corrections is None:
            return
        p.llm_step.retrieve_corrections(observation.scene_text)
        pool = (
            s.experiences.retrieve(p.goal.sentence, observation.scene_text, s.visibility, k=s.config.plan_pool)
            if s.experiences is not None else []
        )
        # Another task's episode walks to where things were then, in its own room or another (ALFWorld's
        # rooms show the same receptacles whatever the objects): where search is a source it serves
        # that task better (after training on valid_train, following them cost valid_seen 2.5 steps
        # a game and a game).
        task = ThisTask.of(p.goal.sentence, p.first, s.domain)
        plans = candidates(task, pool, p.llm_step.correction_pool, only_this_task=KnowledgeSource.SEARCH in s.config.sources,
                           progress=KnowledgeSource.PROGRESS not in s.config.sources)
        p.actor.offer(plans, observation.admissible)
