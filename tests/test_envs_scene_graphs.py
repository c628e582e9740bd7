"""Scene graphs as triples: the text form (what is embedded) and the triples (what readers use)
travel together into the store, out of it, through export and import; stores written before the
triples were kept get them from their text once (migration 4)."""
from __future__ import annotations

from pathlib import Path

import pytest

import prag.store.database as database
from prag.envs.base import Observation, scene_from_text, scene_text_from_triples
from prag.envs.domain import ALFWORLD, GRID, TEXTWORLD
from prag.retrieval.episodes import never_opened, where_things_were
from prag.store import Store
from prag.store.exchange import export_lines, import_lines
from prag.store.records import EpisodeRecord, RunRecord, StepRecord

KITCHEN = [("apple 1", "in", "fridge 1"), ("fridge 1", "is", "open"), ("agent", "holds", "mug 1")]


@pytest.mark.parametrize(
    ("location", "triples"),
    [
        ("fridge 1", KITCHEN),  # ALFWorld
        ("kitchen", [("exit", "north of", "kitchen"), ("milk", "in", "fridge"), ("fridge", "needs", "cleaning"),
                     ("oak door", "is", "closed"), ("red apple", "on", "table")]),  # TextWorld
        ("shelf 1", [("agent", "inRoom", "living room"), ("soda can 1", "onTop", "shelf 1"), ("door 1", "leadsTo", "kitchen"),
                     ("agent", "faces", "shelf 1"), ("sink 1", "is", "on")]),  # the grid
        (None, []),
    ],
)
def test_the_text_form_reads_back_as_its_triples(location, triples):
    assert scene_from_text(scene_text_from_triples(location, triples)) == (location, sorted(triples))


def observation(location: str, triples: list) -> Observation:
    return Observation("goal", "text", [], list(reversed(triples)), scene_text_from_triples(location, triples), location=location)


def an_episode(run_id: str = "r1") -> EpisodeRecord:
    steps = [
        StepRecord.of(0, None, observation("middle of room", [])),
        StepRecord.of(1, "go to fridge 1", observation("fridge 1", [("fridge 1", "is", "closed")])),
        StepRecord.of(2, "open fridge 1", observation("fridge 1", KITCHEN)),
    ]
    return EpisodeRecord(run_id, 0, "t0", "pick", "put a mug in the fridge", False, steps)


def a_run(run_id: str = "r1") -> RunRecord:
    return RunRecord(id=run_id, spec="test", llm="none", mode="prag", k=3, rounds=1)


def test_a_step_keeps_the_triples_in_the_order_of_its_text():
    step = an_episode().steps[2]
    assert step.location == "fridge 1" and step.triples == sorted(KITCHEN)
    assert step.scene == "at: fridge 1\n" + "\n".join(f"{s} {r} {o}" for s, r, o in step.triples)


def test_triples_go_into_the_store_and_come_back(tmp_path: Path):
    with Store(tmp_path / "s.db") as store:
        store.add_run(a_run())
        episode_id = store.add_episode(an_episode())
        back = store.episode(episode_id)
    assert back.steps == an_episode().steps
    assert where_things_were(back, ALFWORLD) == {"apple 1": "in fridge 1"}
    assert never_opened(step.triples for step in back.steps[:2]) == ["fridge 1"]
    assert never_opened(step.triples for step in back.steps) == []


def test_export_and_import_carry_the_triples(tmp_path: Path):
    with Store(tmp_path / "a.db") as source, Store(tmp_path / "b.db") as target:
        source.add_run(a_run())
        source.add_episode(an_episode())
        import_lines(target, list(export_lines(source)))
        (imported,) = list(target.episodes())
    assert imported.steps == an_episode().steps


def test_migration_4_gives_older_rows_their_triples_from_their_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "old.db"
    with monkeypatch.context() as patch:  # a store as prag wrote it before triples were kept
        patch.setattr(database, "MIGRATIONS", [m for m in database.MIGRATIONS if m[0] <= 3])
        with Store(path) as old:
            old.add_run(a_run())
            old.db["episodes"].insert({"id": 1, "run_id": "r1", "round": 0, "task_id": "t0", "goal": "g", "won": 0,
                                       "n_steps": 2, "source": "agent", "extra": "{}"})
            for step in an_episode().steps:
                old.db["steps"].insert({"episode_id": 1, "t": step.t, "action": step.action, "observation": step.observation,
                                        "scene": step.scene, "scene_hash": "h" + step.scene})
            assert old.schema_version == 3
    with Store(path) as store:
        assert 4 in [m["version"] for m in store.migrations()]
        steps = store.episode(1).steps
    assert [(s.location, s.triples) for s in steps] == [(s.location, s.triples) for s in an_episode().steps]


def test_each_family_reads_where_things_were_from_its_own_relations():
    def one_step(*triples) -> EpisodeRecord:
        return EpisodeRecord("r", 0, "t", "x", "g", False, [StepRecord.of(0, None, observation("here", list(triples)))])

    assert where_things_were(one_step(("book 1", "onTop", "shelf 1"), ("cup 1", "inside", "cabinet 1")), GRID) == {
        "book 1": "on shelf 1", "cup 1": "in cabinet 1"}
    assert where_things_were(one_step(("milk", "in", "inventory"), ("knife", "on", "counter")), TEXTWORLD) == {
        "knife": "on counter"}
