"""The plan sources by knowledge-source name (prag.sources): the agent builds its chain from
these in `--sources` order. A new source is a module with a `PlanSource` class and a line here."""
from __future__ import annotations

from collections.abc import Callable, Sequence

from prag.agent.experience_plans import ExperiencePlans
from prag.agent.plan_source import Planning, PlanSource
from prag.agent.search_plans import SearchPlans
from prag.sources import KnowledgeSource

PLAN_SOURCES: dict[str, Callable[[Planning], PlanSource]] = {
    KnowledgeSource.EXPERIENCE: ExperiencePlans,
    KnowledgeSource.SEARCH: SearchPlans,
}


def chain(sources: Sequence[str], planning: Planning) -> list[PlanSource]:
    """The plan sources named among `sources`, in their order (the LLM and the person, asked
    when the mediator asks, are not plan sources)."""
    return [PLAN_SOURCES[name](planning) for name in sources if name in PLAN_SOURCES]
