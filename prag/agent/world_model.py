"""Action models learned from the experience store: every stored episode's transitions, as the
agent observed them, fed to the safe learner (prag.envs.sam).

An episode is replayed through `Observed` step by step from its stored scene graphs, so the
learner sees what the agent knew before and after each action (a thing seen three places ago is
still known), never the game's hidden state. Steps of every step source teach (the LLM's,
search's, a person's), won or lost: a lost game's actions did what they did.

`WorldModels` keeps one model per family and visibility, learned incrementally from the episodes
the store gives for the visibility (`prag.store.visibility`, the progressive rule retrieval and
the semantic memory apply too): a run's round r sees its rounds < r and the runs it `--include`s,
and what round r - 1 learned is extended by the episodes round r - 1 added.
"""
from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from prag.agent.config import AgentConfig, plans_with_learned
from prag.agent.world.observed import Observed
from prag.envs import registry
from prag.envs.base import Observation
from prag.envs.domain import Domain
from prag.envs.facts import fluents, kinds, names_in
from prag.envs.sam import ActionModel, lift
from prag.store import Store
from prag.store.records import EpisodeRecord, StepRecord
from prag.store.visibility import Visibility

NOWHERE = "nowhere"  # where the agent is when its observations do not say


def _observation(goal: str, step: StepRecord) -> Observation:
    return Observation(goal, step.observation, [], list(step.triples), step.scene, location=step.location)


def learn_episode(model: ActionModel, episode: EpisodeRecord, domain: Domain) -> int:
    """Learn from one episode's transitions; returns how many taught something."""
    if not episode.steps:
        return 0
    observed = Observed.start(_observation(episode.goal, episode.steps[0]), domain)
    shown: set[str] = set()  # names seen so far
    _first_states(model, observed, shown)
    learned = 0
    for step in episode.steps[1:]:
        before, here = fluents(observed), observed.location or NOWHERE
        if step.action is None:
            continue
        known = [*names_in(before), *observed.places]
        observed.update(step.action, _observation(episode.goal, step))
        after = fluents(observed)
        _first_states(model, observed, shown)
        lifted = lift(step.action, [*known, *names_in(after), *domain.entities(step.action)])
        if lifted is None:
            continue
        template, arguments = lifted
        static = kinds([*arguments, here], domain.kind)
        learned += model.learn(template, arguments, here, before, after, static)
    model.episodes += 1
    return learned


def _first_states(model: ActionModel, observed: Observed, shown: set[str]) -> None:
    """Tell the model the states (maybe none) of the names the agent sees for the first time in
    the episode: what they were before the agent did anything to them."""
    for name in (names_in(fluents(observed)) | set(observed.states)) - shown:
        shown.add(name)
        model.first_seen(observed.domain.kind(name), set(observed.states.get(name, ())))


def learn(episodes: Iterable[EpisodeRecord], domain: Domain) -> ActionModel:
    """A model learned from `episodes` (those of other families are passed over)."""
    model = ActionModel(domain.name)
    for episode in episodes:
        if family_domain(episode) == domain.name:
            learn_episode(model, episode, domain)
    return model


def family_domain(episode: EpisodeRecord) -> str | None:
    """The action vocabulary (Domain name) an episode was played with, None when unknown."""
    env = episode.extra.env
    return registry.domain(env).name if env is not None and registry.known(env) else None


@dataclass
class _Learning:
    model: ActionModel
    episodes: set[int] = field(default_factory=set)  # ids learned from


class WorldModels:
    """The learned action models of a store's visible episodes, per family (`model`)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._learning: dict[tuple[Visibility, str], _Learning] = {}
        self._lock = threading.Lock()

    def for_agent(self, config: AgentConfig, visibility: Visibility, domain: Domain) -> ActionModel | None:
        """The model an agent of `config` plans with, None where it plans with none learned."""
        return self.model(visibility, domain) if plans_with_learned(config, domain) else None

    def model(self, visibility: Visibility, domain: Domain) -> ActionModel:
        """The model learned from the episodes `visibility` sees; later rounds of a run extend
        what earlier ones learned."""
        # One model for every round of a run: a later round sees all an earlier one saw, and more.
        key = (replace(visibility, before_round=0), domain.name)
        with self._lock:
            learning = self._learning.setdefault(key, _Learning(ActionModel(domain.name)))
            for episode_id in self.store.visible_episode_ids(visibility):
                if episode_id in learning.episodes:
                    continue
                learning.episodes.add(episode_id)
                episode = self.store.episode(episode_id)
                if family_domain(episode) == domain.name:
                    learn_episode(learning.model, episode, domain)
            return learning.model
