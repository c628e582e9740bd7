"""Semantic memory of where things are (prag.store.places): counts per episode from scene graphs,
successes and failures, the progressive rule, deletion, migration 7's backfill, and the CLI."""
from __future__ import annotations

import json
import time
from collections import Counter

from conftest import plan_follower, plans_of, write_spec
from support import minilm, placed_episode, run
from typer.testing import CliRunner

from prag.cli import _register, app
from prag.envs.domain import GRID
from prag.llm.scripted import ScriptedLLM
from prag.retrieval.episodes import where_things_were
from prag.run.config import ExperimentConfig, RetrievalConfig, RunConfig
from prag.run.runner import Runner, start_run
from prag.store import EpisodeRecord, RunRecord, StepRecord, Store, database
from prag.store.episode_extra import EpisodeExtra
from prag.store.exchange import export_lines, import_lines
from prag.store.places import family_of
from prag.store.visibility import Visibility


APPLE_IN_FRIDGE = [("apple 1", "in", "fridge 1"), ("fridge 1", "is", "open")]
APPLE_ON_COUNTER = [("apple 2", "on", "countertop 1")]


def test_each_episode_counts_once_per_place_and_failures_count_too(tmp_path):
    with Store(tmp_path / "s.db") as store:
        store.add_run(run())
        # Seen in the fridge over two steps (one episode for the fridge), then taken and put in the
        # microwave by the agent: not where apples are found.
        store.add_episode(placed_episode([[], APPLE_IN_FRIDGE, APPLE_IN_FRIDGE, [("agent", "holds", "apple 1")],
                                          [("apple 1", "in", "microwave 1")]], task_id="a"))
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
        assert ranked("apple", Visibility("r1", 0)) == []
        assert ranked("apple", Visibility("r1", 1)) == [("fridge", 1)]
        assert ranked("apple", Visibility("r1", 2)) == [("countertop", 1), ("fridge", 1)]
        assert ranked("apple", Visibility("r1", 1, ("other",))) == [("fridge", 1), ("sinkbasin", 1)]
        assert ranked("apple", Visibility("other", 0, ("r1",))) == [("countertop", 1), ("fridge", 1)]
        assert ranked("apple") == [("countertop", 1), ("fridge", 1), ("garbagecan", 1), ("sinkbasin", 1)]
        assert store.places.kinds(Visibility("r1", 1)) == [("apple", 1)]


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


def test_a_real_grid_run_records_where_things_were_as_its_scene_graphs_show(tmp_path):
    spec = write_spec(tmp_path, "two", ["throw_away_trash", "collect_toys"])
    config = RunConfig(ExperimentConfig(spec=spec, rounds=2), RetrievalConfig(mode="none", k=0))
    with Store(tmp_path / "s.db") as store:
        played = start_run(store, config)
        Runner(store, played, config, llm=ScriptedLLM(plan_follower(plans_of(spec))), encoder=minilm()).play()
        episodes = list(store.episodes(played.id))
        assert {e.extra.env for e in episodes} == {"grid"}
        # Worked out from where_things_were (where each thing was first seen; things do not move
        # before the agent takes them): each (kind, place kind) once per episode.
        expected: Counter[tuple[str, str]] = Counter()
        for e in episodes:
            expected.update({(GRID.kind(thing), GRID.kind(place.split(" ", 1)[1]))
                             for thing, place in where_things_were(e, GRID).items()})
        assert expected
        for kind in {kind for kind, _ in expected}:
            counts = {place: n for (k, place), n in expected.items() if k == kind}
            assert store.places.ranked(kind) == sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        round0 = store.places.ranked(next(iter(expected))[0], Visibility(played.id, 1))
        assert round0 and all(n <= 2 for _, n in round0)  # two tasks a round


def test_the_family_of_an_older_episode_is_found_from_its_task_sets_name(tmp_path):
    (tmp_path / "far.toml").write_text('name = "far-away"\nenv = "grid"\nmax_steps = 5\n[params]\ntasks = []\n')
    assert family_of(EpisodeExtra(env="textworld", spec="alfworld-mini"), {}) == "textworld"
    assert family_of(EpisodeExtra(spec="alfworld-mini"), {}) == "alfworld-gen"  # a shipped spec, by name
    recorded = {"experiment": {"spec": "elsewhere.toml", "train": str(tmp_path / "far.toml")}}
    assert family_of(EpisodeExtra(spec="far-away"), recorded) == "grid"  # the run's train spec of that name
    assert family_of(EpisodeExtra(spec="far-away"), {"spec": str(tmp_path / "far.toml")}) == "grid"  # a flat (v1) config
    assert family_of(EpisodeExtra(spec="gone"), recorded) is None
    assert family_of(EpisodeExtra(), {}) is None


def test_migration_7_backfills_a_store_written_at_schema_6(tmp_path, monkeypatch):
    path = tmp_path / "old.db"
    far = tmp_path / "far.toml"
    far.write_text('name = "far-away"\nenv = "grid"\nmax_steps = 5\n[params]\ntasks = []\n')
    with monkeypatch.context() as old_prag:
        old_prag.setattr(database, "MIGRATIONS", [m for m in database.MIGRATIONS if m[0] <= 6])
        old_prag.setattr(database, "SCHEMA_VERSION", 6)
        with Store(path) as old:
            old.add_run(run("r1"))
            old.add_run(RunRecord(id="r2", spec="far-away", llm="none", mode="prag", k=3, rounds=1,
                                  config={"experiment": {"spec": str(far)}}))
            # As the runner wrote episodes before issue 13: the task set's name, no family.
            old.add_episode(placed_episode([APPLE_IN_FRIDGE], task_id="a", won=False, extra=EpisodeExtra(spec="alfworld-mini")))
            text_only = old.add_episode(placed_episode([APPLE_ON_COUNTER], task_id="b", extra=EpisodeExtra(spec="alfworld-mini")))
            old.add_episode(placed_episode([[("apple 4", "in", "fridge 2")]], task_id="c", extra=EpisodeExtra(spec="gone")))
            old.add_episode(EpisodeRecord("r2", 0, "g", "pick", "g", True, [
                StepRecord(0, None, "o", "x", None, [("eggs 1", "onTop", "table 1"), ("eggs 1", "inside", "fridge 1")])],
                extra=EpisodeExtra(spec="far-away")))
            # A step stored before triples were kept is read from its text.
            old.db.execute("update steps set graph = null where episode_id = ?", [text_only])
            old.db.conn.commit()
            assert old.schema_version == 6 and "places" not in old.db.table_names()
    with Store(path) as store:
        assert 7 in [m["version"] for m in store.migrations()]
        assert store.places.ranked("apple") == [("countertop", 1), ("fridge", 1)]  # not "c": its family is unknown
        assert store.places.ranked("eggs") == [("fridge", 1), ("table", 1)]


def test_an_import_rebuilds_the_places_of_its_episodes(tmp_path):
    with Store(tmp_path / "a.db") as source, Store(tmp_path / "b.db") as target:
        source.add_run(run())
        source.add_episode(placed_episode([APPLE_IN_FRIDGE], task_id="a"))
        source.add_episode(placed_episode([APPLE_ON_COUNTER, APPLE_IN_FRIDGE], task_id="b", won=False))
        import_lines(target, list(export_lines(source)))
        assert target.places.ranked("apple") == source.places.ranked("apple") == [("fridge", 2), ("countertop", 1)]


def test_ranking_a_kind_on_a_store_of_10k_episodes_takes_a_few_milliseconds(tmp_path):
    with Store(tmp_path / "big.db") as store:
        store.add_run(run(rounds=100))
        kinds = ["apple", "mug", "knife", "egg", "potato", "book", "pen", "cup"]
        places = ["fridge", "countertop", "diningtable", "cabinet", "drawer", "sinkbasin", "shelf", "microwave"]
        with store.transaction():
            for n in range(10_000):
                graph = [(f"{kinds[(n + i) % 8]} {i + 1}", "in", f"{places[(n * 3 + i) % 8]} {1 + n % 4}") for i in range(6)]
                store.add_episode(placed_episode([[], graph, graph], round_=n // 100, task_id=f"t{n}"))
        start = time.perf_counter()
        for _ in range(20):
            everything = store.places.ranked("apple")
            store.places.ranked("apple", Visibility("r1", 50))
        per_call = (time.perf_counter() - start) / 40
        assert sum(n for _, n in everything) == 10_000 * 6 // 8
        assert per_call < 0.05, f"{per_call * 1000:.1f} ms a call"


def cli(*args):
    _register()  # the commands, as `prag` registers them on first use
    return CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "100"})


def test_prag_query_where_and_prag_stats_show_where_things_are_found(tmp_path):
    path = tmp_path / "s.db"
    with Store(path) as store:
        store.add_run(run())
        store.add_episode(placed_episode([APPLE_IN_FRIDGE], task_id="a", round_=0))
        store.add_episode(placed_episode([APPLE_ON_COUNTER, APPLE_IN_FRIDGE + [("mug 1", "in", "cabinet 3")]],
                                         task_id="b", round_=1, won=False))
    table = cli("query", path, "--where", "apple")
    assert table.exit_code == 0, table.output
    rows = [line.split("│")[1:3] for line in table.output.splitlines() if line.count("│") == 3]
    assert "where apple was found" in table.output and "place" in table.output and "episodes" in table.output
    assert [[cell.strip() for cell in row] for row in rows] == [["fridge", "2"], ["countertop", "1"]]
    round1 = cli("query", path, "--where", "apple", "--run", "r1", "--round", "1", "--json")
    assert json.loads(round1.output) == [{"place": "fridge", "episodes": 1}]
    none = cli("query", path, "--where", "knife")
    assert none.exit_code == 0 and "no knife was seen" in none.output and "kinds seen: apple, mug" in none.output
    both = cli("query", path, "put an apple away", "--where", "apple")
    assert both.exit_code != 0 and "one of them" in both.output
    stats = cli("stats", path)
    assert stats.exit_code == 0, stats.output
    assert "where things are found" in stats.output
    assert any("apple" in line and "2" in line and "fridge 2, countertop 1" in line for line in stats.output.splitlines())
    figures = json.loads(cli("stats", path, "--json").output)
    assert figures["places"][:2] == [
        {"kind": "apple", "episodes": 2, "places": [["fridge", 2], ["countertop", 1]]},
        {"kind": "mug", "episodes": 1, "places": [["cabinet", 1]]},
    ]
