"""Semantic memory of where things are (prag.store.places): counts per episode from scene graphs,
successes and failures, the progressive rule, deletion, migration 7's backfill, and the CLI."""
from __future__ import annotations

from support import run

from prag.envs.base import scene_text_from_triples
from prag.store import EpisodeRecord, StepRecord, Store


def placed_episode(
    graphs: list[list[tuple[str, str, str]]], *, run_id: str = "r1", round_: int = 0, task_id: str = "t0",
    won: bool = True, extra: dict | None = None,
) -> EpisodeRecord:
    """An ALFWorld-style episode whose step t shows `graphs[t]`."""
    steps = [
        StepRecord(t, None if t == 0 else f"go to place {t}", f"You see step {t}.", scene_text_from_triples(None, triples),
                   None, sorted(triples))
        for t, triples in enumerate(graphs)
    ]
    return EpisodeRecord(run_id=run_id, round=round_, task_id=task_id, task_type="pick", goal=f"goal of {task_id}",
                         won=won, steps=steps, extra={"env": "alfworld"} if extra is None else extra)


APPLE_IN_FRIDGE = [("apple 1", "in", "fridge 1"), ("fridge 1", "is", "open")]
APPLE_ON_COUNTER = [("apple 2", "on", "countertop 1")]


def test_each_episode_counts_once_per_place_and_failures_count_too(tmp_path):
    with Store(tmp_path / "s.db") as store:
        store.add_run(run())
        # Seen in the fridge over three steps, then held (not a place): one episode for the fridge.
        store.add_episode(placed_episode([[], APPLE_IN_FRIDGE, APPLE_IN_FRIDGE, [("agent", "holds", "apple 1")]],
                                         task_id="a"))
        # A lost episode saw apples in the fridge and on a counter, and a mug in the cabinet.
        store.add_episode(placed_episode([APPLE_ON_COUNTER, APPLE_IN_FRIDGE + [("mug 1", "in", "cabinet 3")]],
                                         task_id="b", won=False))
        store.add_episode(placed_episode([APPLE_ON_COUNTER, [("apple 3", "on", "countertop 2")]], task_id="c"))
        store.add_episode(placed_episode([[("apple 1", "on", "diningtable 1")]], task_id="d"))
        assert store.places.ranked("apple") == [("countertop", 2), ("fridge", 2), ("diningtable", 1)]
        assert store.places.ranked("mug") == [("cabinet", 1)]
        assert store.places.ranked("Apple ") == store.places.ranked("apple")
        assert store.places.ranked("knife") == []
        assert store.places.kinds() == [("apple", 4), ("mug", 1)]


def test_round_r_sees_its_rounds_before_r_and_the_included_runs(tmp_path):
    with Store(tmp_path / "s.db") as store:
        for name in ("r1", "other", "unrelated"):
            store.add_run(run(name))
        store.add_episode(placed_episode([APPLE_IN_FRIDGE], round_=0, task_id="a"))
        store.add_episode(placed_episode([APPLE_ON_COUNTER], round_=1, task_id="a"))
        store.add_episode(placed_episode([[("apple 1", "in", "sinkbasin 1")]], run_id="other"))
        store.add_episode(placed_episode([[("apple 1", "in", "garbagecan 1")]], run_id="unrelated"))
        ranked = store.places.ranked
        assert ranked("apple", run_id="r1", before_round=0) == []
        assert ranked("apple", run_id="r1", before_round=1) == [("fridge", 1)]
        assert ranked("apple", run_id="r1", before_round=2) == [("countertop", 1), ("fridge", 1)]
        assert ranked("apple", run_id="r1", before_round=1, include_runs=("other",)) == [("fridge", 1), ("sinkbasin", 1)]
        assert ranked("apple", run_id="other", before_round=0, include_runs=("r1",)) == [("countertop", 1), ("fridge", 1)]
        assert ranked("apple") == [("countertop", 1), ("fridge", 1), ("garbagecan", 1), ("sinkbasin", 1)]
        assert store.places.kinds(run_id="r1", before_round=1) == [("apple", 1)]


def test_deleting_an_episode_or_a_run_takes_its_places_along(tmp_path):
    with Store(tmp_path / "s.db") as store:
        store.add_run(run("r1"))
        store.add_run(run("r2"))
        first = store.add_episode(placed_episode([APPLE_IN_FRIDGE], task_id="a"))
        store.add_episode(placed_episode([APPLE_ON_COUNTER], task_id="b"))
        store.add_episode(placed_episode([APPLE_ON_COUNTER], run_id="r2"))
        store.delete_episode(first)
        assert store.places.ranked("apple") == [("countertop", 2)]
        store.delete_run("r2")
        assert store.places.ranked("apple") == [("countertop", 1)]
        store.delete_run("r1")
        assert store.count("places") == 0
