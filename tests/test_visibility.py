"""The progressive rule is one rule (prag.store.visibility): for every run and round, retrieval, the
semantic memory of places, the verified goal readings and the learned action models see the same
episodes, on a store file of real ALFWorld episodes."""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from support import alfworld_home, cache_for, minilm, oracle_episode, run

from prag.agent.world_model import WorldModels, learn
from prag.envs.alfworld.env import TASK_TYPES
from prag.envs.alfworld.gen import DIFFICULTIES, generate_game
from prag.envs.domain import ALFWORLD
from prag.retrieval.index import ExperienceIndex
from prag.store import EpisodeRecord, Store
from prag.store.episode_extra import GoalReading
from prag.store.places import found
from prag.store.visibility import Visibility

# task id -> (run, round, source) of the stored episodes, each a different real game
STORED = {
    "t0": ("train", 0, "agent"), "t1": ("train", 0, "agent"),
    "s0": ("test", 0, "agent"), "s1": ("test", 1, "agent"), "s2": ("test", 2, "agent"),
    "o0": ("other", 0, "agent"),
    "c0": ("test", 0, "correction"),  # not a play: nothing sees it
}
# What each visibility sees, by task id, as the README and docs state the rule.
SEEN = [
    (Visibility("test", 0), set()),
    (Visibility("test", 1), {"s0"}),
    (Visibility("test", 2), {"s0", "s1"}),
    (Visibility("test", 3), {"s0", "s1", "s2"}),
    (Visibility("test", 1, ("train",)), {"s0", "t0", "t1"}),
    (Visibility("test", 1, ("test",)), {"s0", "s1", "s2"}),  # a run that includes itself sees all of it
    (Visibility("train", 0), set()),
    (Visibility(), {"t0", "t1", "s0", "s1", "s2", "o0"}),
]


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield from alfworld_home(tmp_path_factory)


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory, generated: Path) -> Path:
    path = tmp_path_factory.mktemp("visibility") / "s.db"
    games = [(task_type, seed) for seed in (1, 2) for task_type in TASK_TYPES][: len(STORED)]
    with Store(path) as store:
        for name in ("train", "test", "other"):
            store.add_run(run(name))
        for (task_id, (run_id, round_, source)), (task_type, seed) in zip(STORED.items(), games):
            episode = oracle_episode(generate_game(task_type, seed, generated, DIFFICULTIES["medium"]), task_type)
            reading = GoalReading(episode.goal, episode.goal, "template")  # verified: won
            store.add_episode(replace(episode, run_id=run_id, round=round_, task_id=task_id, source=source,
                                      extra=replace(episode.extra, reading=reading)))
    return path


def places_of(episode: EpisodeRecord) -> set[tuple[str, str]]:
    return found("alfworld-gen", (step.triples for step in episode.steps))


@pytest.mark.parametrize(("visibility", "seen"), SEEN, ids=[f"{v.run_id}-{v.before_round}-{v.include_runs}" for v, _ in SEEN])
def test_retrieval_places_readings_and_world_models_see_the_same_episodes(
    store_path: Path, visibility: Visibility, seen: set[str]
) -> None:
    with Store(store_path) as store:
        episodes: list[EpisodeRecord] = [e for e in store.episodes() if e.task_id in seen]  # id order
        ids = [e.id for e in episodes]
        assert store.visible_episode_ids(visibility) == ids

        cache = cache_for(store, minilm())
        index = ExperienceIndex.from_store(store, cache)
        hits = index.query(cache.vectors(["put a thing somewhere"])[0], None, k=len(STORED), mode="goal",
                           visibility=visibility)
        assert sorted(hit.episode_id for hit in hits) == ids

        where: Counter[tuple[str, str]] = Counter()
        for episode in episodes:
            where.update(places_of(episode))
        for kind in {kind for episode in store.episodes() for kind, _ in places_of(episode)}:
            expected = sorted(((place, n) for (k, place), n in where.items() if k == kind), key=lambda p: (-p[1], p[0]))
            assert store.places.ranked(kind, visibility) == expected, kind
        assert sum(r.episodes for r in store.readings.verified(visibility)) == len(episodes)

        model = WorldModels(store).model(visibility, ALFWORLD)
        assert model.episodes == len(episodes)
        assert model.to_json() == learn(episodes, ALFWORLD).to_json()

