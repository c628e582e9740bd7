"""The one agent factory: the P-RAG agent of a run's config, as every executor plays it and as the
ask-policy trainer (prag.run.asker) trains it.

`Players` is what an agent is built with besides its config: the LLM, what it reads of the store
(past episodes, corrections, places, verified readings, the learned action model), the ask policy
and a person. `StoreReaders` makes those readers from a store, for the runner, its worker
processes and the trainer alike; a Ray worker makes them from its round's snapshot instead
(prag.run.ray_executor). Either way `build_agent` turns them into the agent, so that a policy
trained here is trained on the agent it then runs in.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from prag.agent.agent import PragAgent
from prag.agent.config import AgentConfig
from prag.agent.goals.readers import Recall, no_recall
from prag.agent.person import Person
from prag.agent.sources.mediator import AskPolicy
from prag.agent.world.places import Ranking
from prag.agent.world_model import WorldModels
from prag.envs.domain import Domain
from prag.envs.sam import ActionModel
from prag.llm import LLM
from prag.retrieval.corrections import CorrectionSource
from prag.retrieval.embed import EmbeddingCache
from prag.retrieval.episodes import ExperienceSource
from prag.retrieval.index import Visibility, check_mode
from prag.retrieval.readings import ReadingMemory
from prag.run.config import RetrievalConfig, RunConfig
from prag.store import Store


@dataclass(frozen=True)
class Players:
    """What an episode is played with besides its task: the LLM, the retrieval sources (the
    corrections by domain; the semantic memory of places for a visibility), the ask policy and
    a person beside the agent."""

    llm: LLM
    experiences: ExperienceSource
    corrections: dict[str, CorrectionSource]
    places: Callable[[Visibility], Ranking]
    asker: AskPolicy | None = None
    person: Person | None = None
    # verified goal readings for a visibility (prag.agent.goals.readers); none where no store is at hand
    readings: Callable[[Visibility], Recall] = lambda visibility: no_recall
    # the action model learned from the store that the agent plans with, if any (prag.agent.world_model)
    models: Callable[[AgentConfig, Visibility, Domain], ActionModel | None] = lambda config, visibility, domain: None


def build_agent(config: RunConfig, players: Players, visibility: Visibility, domain: Domain, later: int = 0
                ) -> PragAgent:
    """The P-RAG agent of `config` for one episode of `domain`'s family, seeing what `visibility`
    allows of everything `players` hold; `later` rounds play the task again after this one."""
    return PragAgent(
        players.llm, players.experiences, visibility, config.agent,
        seed=config.experiment.seed, corrections=players.corrections.get(domain.name), domain=domain,
        asker=players.asker, person=players.person, ranking=players.places(visibility),
        recall=players.readings(visibility), world_model=players.models(config.agent, visibility, domain), later=later,
    )


def semantic_memory(store: Store, visibility: Visibility) -> Ranking:
    """The find-X skill's ranking of places for a kind of thing: the store's semantic memory,
    seeing only the episodes the agent's retrieval may see (round r learns from rounds < r)."""
    return lambda kind: store.places.ranked(kind, visibility)


class StoreReaders:
    """What agents read of a store, with queries encoded through `queries`: its episodes, the
    corrections of each domain, its verified goal readings and the action models learned from it."""

    def __init__(self, store: Store, queries: EmbeddingCache, retrieval: RetrievalConfig) -> None:
        self.store = store
        self.queries = queries
        self.retrieval = retrieval
        self.experiences = ExperienceSource(store, queries, check_mode(retrieval.mode), retrieval.k)
        self.reading_memory = ReadingMemory(store, queries)
        self.world_models = WorldModels(store)
        self.corrections: dict[str, CorrectionSource] = {}  # by domain (action vocabulary)

    def refresh(self, domain: str) -> None:
        """Read again what the store holds now (episodes and corrections: a person may have added
        or deleted some), the corrections of `domain` read first where the run shows corrections."""
        self.experiences.refresh()
        retrieval = self.retrieval
        if not retrieval.corrections or retrieval.corrections_k == 0:
            return
        if domain not in self.corrections:
            self.corrections[domain] = CorrectionSource(
                self.store, self.queries, k=retrieval.corrections_k, domain=domain, prior=retrieval.prior)
        else:
            self.corrections[domain].refresh()

    def players(self, llm: LLM, asker: AskPolicy | None = None, person: Person | None = None) -> Players:
        """The players of an agent asking `llm`, reading this store."""
        return Players(llm, self.experiences, self.corrections, lambda visibility: semantic_memory(self.store, visibility),
                       asker, person, self.reading_memory.recaller, self.world_models.for_agent)
