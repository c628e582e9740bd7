"""Builders shared by the store, retrieval and CLI tests."""
from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from prag.envs.alfworld.env import AlfworldEnv
from prag.envs.base import Task, scene_text_from_triples
from prag.retrieval.embed import EmbeddingCache, Encoder, text_hash
from prag.store import Store
from prag.store.episode_extra import EpisodeExtra
from prag.store.records import EpisodeRecord, RunRecord, StepRecord


@cache
def minilm() -> Encoder:
    """The real all-MiniLM-L6-v2 encoder, loaded once per test session."""
    return Encoder()


class RefusingEncoder(Encoder):
    """Stand-in for tests whose vectors are all in the store already: encoding is a bug."""

    def __init__(self, name: str = "random-unit", dim: int = 8) -> None:
        super().__init__(name)
        self._dim = dim

    @property
    def dim(self) -> int:
        return self._dim

    def encode(self, texts):  # type: ignore[no-untyped-def]
        raise AssertionError(f"unexpected encode of {len(texts)} texts")


def episode(
    run_id: str = "r1",
    round_: int = 0,
    task_id: str = "t0",
    goal: str = "put a clean apple in the fridge",
    won: bool = True,
    scenes: tuple[str, ...] = ("at: kitchen", "at: fridge 1\nfridge 1 is closed"),
    task_type: str = "pick_clean_then_place_in_recep",
) -> EpisodeRecord:
    steps = [StepRecord(0, None, "You are in the middle of a room.", scenes[0])]
    steps += [
        StepRecord(t, f"go to place {t}", f"You arrive at place {t}.", scene)
        for t, scene in enumerate(scenes[1:], start=1)
    ]
    return EpisodeRecord(
        run_id=run_id, round=round_, task_id=task_id, task_type=task_type, goal=goal, won=won,
        steps=steps, shortest_path=len(scenes) - 1,
    )


def placed_episode(
    graphs: list[list[tuple[str, str, str]]], *, run_id: str = "r1", round_: int = 0, task_id: str = "t0",
    won: bool = True, extra: EpisodeExtra | None = None,
) -> EpisodeRecord:
    """An ALFWorld-style episode whose step t shows `graphs[t]`."""
    steps = [
        StepRecord(t, None if t == 0 else f"go to place {t}", f"You see step {t}.", scene_text_from_triples(None, triples),
                   None, sorted(triples))
        for t, triples in enumerate(graphs)
    ]
    return EpisodeRecord(run_id=run_id, round=round_, task_id=task_id, task_type="pick", goal=f"goal of {task_id}",
                         won=won, steps=steps, extra=EpisodeExtra(env="alfworld") if extra is None else extra)


def oracle_episode(game: Path, task_type: str, run_id: str = "train", round_: int = 0) -> EpisodeRecord:
    """The oracle's episode of a real generated ALFWorld game, as the store keeps it."""
    env = AlfworldEnv(Task(game.parent.name, task_type, 0, str(game)), game)
    try:
        obs = env.reset()
        steps = [StepRecord.of(0, None, obs)]
        for t, action in enumerate(env.oracle_plan(), start=1):
            obs = env.step(action)
            steps.append(StepRecord.of(t, action, obs))
    finally:
        env.close()
    assert obs.won
    return EpisodeRecord(run_id=run_id, round=round_, task_id=f"{task_type}-{game.parent.name}", task_type=task_type,
                         goal=steps[0].observation,
                         won=True, steps=steps, extra=EpisodeExtra(env="alfworld-gen"))


def run(run_id: str = "r1", rounds: int = 3) -> RunRecord:
    return RunRecord(id=run_id, spec="test", llm="none", mode="prag", k=3, rounds=rounds)


def unit(rng: np.random.Generator, dim: int) -> np.ndarray:
    v = rng.standard_normal(dim).astype(np.float32)
    return v / np.linalg.norm(v)


def add_random_episode(store: Store, rng: np.random.Generator, model: str, dim: int, **fields) -> tuple[EpisodeRecord, np.ndarray, list[np.ndarray]]:
    """Store an episode whose goal and scene vectors are random unit vectors."""
    record = episode(**fields)
    goal_vec = unit(rng, dim)
    scene_vecs = [unit(rng, dim) for _ in record.steps]
    vectors = {text_hash(record.goal): goal_vec}
    vectors.update({text_hash(s.scene): v for s, v in zip(record.steps, scene_vecs)})
    store.add_vectors(model, vectors)
    store.add_episode(record)
    return record, goal_vec, scene_vecs


def cache_for(store: Store, encoder: Encoder) -> EmbeddingCache:
    return EmbeddingCache(store, encoder)


def damage_a_page_of(path, table: str = "steps") -> None:
    """Overwrite the header of a middle page of `table`'s b-tree (the store is closed)."""
    conn = sqlite3.connect(path)
    pages = [row[0] for row in conn.execute("select pageno from dbstat where name = ? order by pageno", [table])]
    size = conn.execute("pragma page_size").fetchone()[0]
    conn.close()
    with open(path, "r+b") as handle:
        handle.seek((pages[len(pages) // 2] - 1) * size)
        handle.write(b"\xff" * 64)


def stored_steps(path, episodes: int = 40) -> None:
    """A store of run r1 whose episodes' steps fill many pages (for damaging one of them)."""
    with Store(path) as store:
        store.add_run(run())
        for n in range(episodes):
            store.add_episode(episode(task_id=f"t{n}", scenes=tuple(f"scene {n}.{t} " + "x" * 400 for t in range(5))))


def play_until_won(env, agent, limit: int) -> bool:
    """One episode of `agent` on `env`, at most `limit` actions; whether it was won. Closes `env`."""
    observation = env.reset()
    agent.reset(observation)
    for _ in range(limit):
        decision = agent.act(observation)
        observation = env.step(decision.action)
        agent.observe(decision.action, observation)
        if observation.won:
            break
    env.close()
    return observation.won


def sciworld_spec(folder: Path, name: str, task: str, split: str, seed: int, max_steps: int) -> str:
    """A spec of one ScienceWorld task's variation, drawn by `seed` from `split`, written in `folder`."""
    path = folder / f"{name}.toml"
    path.write_text(f'name = "{name}"\nenv = "sciworld"\nmax_steps = {max_steps}\n[params]\n'
                    f'tasks = ["{task}"]\nsplit = "{split}"\nvariations = 1\nseed = {seed}\n')
    return str(path)


def played_rounds(folder: Path, llm, spec: str, agent, rounds: int = 1, train: str | None = None) -> list[EpisodeRecord]:
    """The episodes `prag run` plays of `spec` (after `train`'s rounds, where given) with `llm`
    and the agent config `agent`, into a store in `folder`, in the order played."""
    from prag.run.config import ExecutionConfig, ExperimentConfig, RunConfig
    from prag.run.runner import Runner, start_run

    config = RunConfig(ExperimentConfig(spec=spec, rounds=rounds, train=train, llm=llm.name), agent=agent,
                       execution=ExecutionConfig(answer_cache=False))
    with Store(folder / "played.db") as store:
        run_record = start_run(store, config)
        Runner(store, run_record, config, llm=llm, encoder=minilm()).play()
        return sorted(store.episodes(run_record.id), key=lambda e: e.id or 0)


def alfworld_home(factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A folder for generated ALFWorld games, with ALFWORLD_DATA out of $HOME while they are made."""
    out = factory.mktemp("generated")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ALFWORLD_DATA", str(factory.mktemp("alfworld_home")))
        yield out


def fresh_cache(factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A module's own empty user cache (PRAG_CACHE), so games are generated as on a new machine."""
    root = factory.mktemp("prag-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PRAG_CACHE", str(root))
        yield root
