"""What a P-RAG agent is built with and keeps from episode to episode: the LLM, what it retrieves
and recalls from the store, its config and its family's domain (prag.run.agents builds them)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from prag.agent.person import Person
from prag.agent.places import Ranking
from prag.agent.readers import Recall
from prag.envs.domain import Domain
from prag.envs.sam import ActionModel
from prag.llm.base import LLM
from prag.retrieval.corrections import CorrectionSource
from prag.retrieval.episodes import ExperienceSource
from prag.retrieval.index import Visibility

if TYPE_CHECKING:  # the config is the agent's, which keeps these
    from prag.agent.agent import AgentConfig


@dataclass(frozen=True)
class AgentSettings:
    llm: LLM
    experiences: ExperienceSource | None
    corrections: CorrectionSource | None
    visibility: Visibility
    config: AgentConfig
    seed: int
    domain: Domain
    person: Person | None  # present: the LLM's proposals go to them for a yes or no
    ranking: Ranking  # the semantic memory: kinds of place where a kind of thing was seen
    recall: Recall  # verified readings of wordings like an instruction (prag.agent.readers)
    world_model: ActionModel | None  # the action model learned from the store (prag.agent.world_model)
