"""The plan sources by knowledge-source name (prag.sources): the agent builds its chain from
these in `--sources` order. A new source is a module with a class that proposes
(prag.agent.proposal.Proposer: its standing declares how the arbiter adopts its plans)
and a line here: `--sources` then takes its name, and its help shows the class's first docstring line."""
from __future__ import annotations

from collections.abc import Callable, Sequence

from prag.agent.sources.experience_plans import ExperiencePlans
from prag.agent.sources.plan_source import Planning
from prag.agent.sources.progress_plans import ProgressPlans
from prag.agent.proposal import Proposer
from prag.agent.sources.search_plans import SearchPlans
from prag.sources import KNOWLEDGE, KnowledgeSource

PLAN_SOURCES: dict[str, Callable[[Planning], Proposer]] = {
    KnowledgeSource.EXPERIENCE: ExperiencePlans,
    KnowledgeSource.SEARCH: SearchPlans,
    KnowledgeSource.PROGRESS: ProgressPlans,
}


def chain(sources: Sequence[str], planning: Planning) -> list[Proposer]:
    """The plan sources named among `sources`, in their order (the LLM and the person, asked
    when the mediator asks, propose only then: prag.agent.asking.asking)."""
    return [PLAN_SOURCES[name](planning) for name in sources if name in PLAN_SOURCES]


def source_names() -> tuple[str, ...]:
    """Every name `--sources` takes: the registered plan sources, then the LLM and the person."""
    return tuple(dict.fromkeys([*PLAN_SOURCES, *KnowledgeSource]))


def describe(name: str) -> str:
    """What a source gives, as `--sources` help says it: the registry's words, or for a plan source
    registered without them, its class's first docstring line."""
    if name in KNOWLEDGE:
        return KNOWLEDGE[KnowledgeSource(name)].description
    return (PLAN_SOURCES[name].__doc__ or name).strip().splitlines()[0]
