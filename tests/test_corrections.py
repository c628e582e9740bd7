"""The corrections layer of the store (migration 2, provenance, delete), the shipped prior
transcripts (each wins when replayed on prag's own games, none is an evaluation game), and
`prag corrections list/show/delete`."""
from __future__ import annotations

import json

import pytest
from support import episode, minilm, run
from typer.testing import CliRunner

import prag.store.database as store_module
from prag.cli import _register, app
from prag.corrections.prior import load_prior, prior_dir, prior_transcripts
from prag.corrections.replay import open_task, replay
from prag.envs.spec import load_spec
from prag.retrieval.corrections import add_correction
from prag.retrieval.embed import EmbeddingCache, text_hash
from prag.store import Store
from prag.store.corrections import Correction, CorrectionError
from prag.store.schema import SCHEMA_VERSION
from prag.store.transcripts import parse

_register()


def correction(**fields) -> Correction:
    values = dict(
        origin="feedback", domain="alfworld", goal="put a hot apple in fridge.",
        instructions=["put a hot apple in fridge.", "heat it first"],
        transcript=">>> wait_for_trigger()\n{'type': 'dialog', 'text': 'put a hot apple in fridge.'}\n",
        verified=True, verify_note="won after 6 actions", scenes=["at: middle of room", "at: microwave 1"],
        spec="alfworld-mini", task_id="pick_heat_then_place_in_recep-0", task_type="pick_heat_then_place_in_recep",
        feedback="heat it first", improvement_model="local:qwen", problem="It did not heat the apple.",
        advice="Heat the apple in the microwave before placing it.", answer=">>> ...", input_transcript=">>> ...",
    )
    values.update(fields)
    return Correction(**values)


def test_an_old_store_is_migrated_to_the_corrections_schema_with_its_episodes_kept(tmp_path, monkeypatch):
    path = tmp_path / "old.db"
    with monkeypatch.context() as patch:
        patch.setattr(store_module, "MIGRATIONS", store_module.MIGRATIONS[:1])
        patch.setattr(store_module, "SCHEMA_VERSION", 1)
        with Store(path) as old:  # rows as a prag of schema 1 wrote them
            with old.transaction() as conn:
                conn.execute("insert into runs (id, spec, llm, mode, k, rounds, config, include_runs, status) "
                             "values ('r1', 'test', 'none', 'prag', 3, 3, '{}', '[]', 'finished')")
                conn.execute("insert into episodes (id, run_id, round, task_id, task_type, goal, goal_hash, won, "
                             "n_steps, source) values (1, 'r1', 0, 't0', 'pick', ?, ?, 1, 1, 'agent')",
                             [episode().goal, text_hash(episode().goal)])
                conn.executemany("insert into steps (episode_id, t, action, observation, scene, scene_hash) "
                                 "values (1, ?, ?, ?, ?, ?)",
                                 [(s.t, s.action, s.observation, s.scene, text_hash(s.scene)) for s in episode().steps])
            assert "corrections" not in old.db.table_names()
    with Store(path) as new:
        assert new.schema_version == SCHEMA_VERSION
        assert [m["name"] for m in new.migrations()][:2] == ["runs, episodes, steps, embeddings", "corrections, prior_loads"]
        assert [(s.t, s.action, s.scene) for s in new.episode(1).steps] == [(s.t, s.action, s.scene) for s in episode().steps]
        assert new.run_states() == {"r1": "finished"}
        assert new.corrections.list() == []


def test_a_correction_keeps_its_provenance_and_vectors_until_deleted(tmp_path):
    with Store(tmp_path / "s.db") as store:
        store.add_run(run())
        source = store.add_episode(episode())
        cache = EmbeddingCache(store, minilm())
        stored = correction(source_episode=source)
        correction_id = add_correction(store, cache, stored)
        assert correction_id == stored.id and stored.created_at
    with Store(tmp_path / "s.db", create=False) as store:  # reopened from disk
        back = store.corrections.get(correction_id)
        assert back == stored
        vectors = store.vectors(minilm().name, [text_hash(t) for t in stored.instructions + stored.scenes])
        assert len(vectors) == 4  # instructions and scenes are embedded through `embeddings`
        assert store.corrections.delete(correction_id).goal == stored.goal
        assert store.corrections.list() == []
        assert store.vectors(minilm().name, [text_hash(t) for t in stored.instructions + stored.scenes]) == {}
        with pytest.raises(CorrectionError, match="no correction"):
            store.corrections.get(correction_id)
        with pytest.raises(CorrectionError, match="no correction"):
            store.corrections.delete(correction_id)


def test_deleting_a_correction_keeps_the_vectors_other_rows_still_use(tmp_path):
    with Store(tmp_path / "s.db") as store:
        cache = EmbeddingCache(store, minilm())
        store.add_run(run())
        shared = episode(goal="put a hot apple in fridge.")  # the correction's goal, as an episode's goal
        cache.vectors([shared.goal] + [s.scene for s in shared.steps])
        store.add_episode(shared)
        first = add_correction(store, cache, correction())
        add_correction(store, cache, correction(instructions=["put a hot apple in fridge."], scenes=["at: microwave 1"],
                                                transcript=">>> act('heat apple 1 with microwave 1')\n"))
        store.corrections.delete(first)
        kept = store.vectors(minilm().name, [text_hash(t) for t in correction().instructions + correction().scenes])
        # "heat it first" and "at: middle of room" were the deleted correction's alone
        assert set(kept) == {text_hash("put a hot apple in fridge."), text_hash("at: microwave 1")}


def test_bad_corrections_are_refused(tmp_path):
    with Store(tmp_path / "s.db") as store:
        cache = EmbeddingCache(store, minilm())
        with pytest.raises(CorrectionError, match="unknown origin"):
            add_correction(store, cache, correction(origin="rumour"))
        with pytest.raises(CorrectionError, match="at least one instruction"):
            add_correction(store, cache, correction(instructions=[]))
        with pytest.raises(Exception, match="no episode 99"):
            add_correction(store, cache, correction(source_episode=99))
        assert store.corrections.list() == []


def test_every_prior_transcript_wins_when_replayed_on_its_own_task():
    priors = prior_transcripts()
    sets = {p.name.split("/")[0] for p in priors}
    assert sets == {"alfworld-prior", "grid-prior"}
    types = {load_spec(str(p.spec_path)).env: set() for p in priors}
    for prior in priors:
        transcript = parse(prior.text)
        _, task, env = open_task(str(prior.spec_path), prior.task_id)
        try:
            result = replay(transcript, env)
            assert transcript.goal == env.reset().goal, prior.name
        finally:
            env.close()
        assert result.won, f"{prior.name}: {result.note}"
        assert result.actions == len(transcript.actions)  # nothing after the win
        types[load_spec(str(prior.spec_path)).env].add(task.task_type)
    from prag.envs.alfworld.env import TASK_TYPES
    from prag.envs.grid import TASKS

    assert types == {"alfworld-gen": set(TASK_TYPES), "grid": set(TASKS)}


def test_prior_transcripts_are_written_on_games_no_shipped_task_set_evaluates():
    from prag.envs.alfworld.gen import parse_params
    from prag.envs.spec import list_specs

    prior_specs = {path.stem: load_spec(str(path)) for path in prior_dir().glob("*.toml")}
    evaluated_games, evaluated_houses = set(), set()
    for path in list_specs():
        spec = load_spec(str(path))
        if spec.env == "alfworld-gen":
            evaluated_games.add(parse_params(spec.params).digest())
        elif spec.env == "grid":
            evaluated_houses |= {(t.task_type, t.seed, spec.params.get("size", 6)) for t in spec.open().tasks()}
    assert parse_params(prior_specs["alfworld-prior"].params).digest() not in evaluated_games
    grid = prior_specs["grid-prior"]
    houses = {(t.task_type, t.seed, grid.params["size"]) for t in grid.open().tasks()}
    assert not houses & evaluated_houses


def test_prior_transcripts_load_once_per_domain_and_a_deleted_one_stays_deleted(tmp_path):
    with Store(tmp_path / "s.db") as store:
        cache = EmbeddingCache(store, minilm())
        loaded = load_prior(store, cache, domain="grid")
        assert {c.task_type for c in loaded} == {"put_away_groceries", "throw_away_trash", "water_plants", "collect_toys", "wash_dishes"}
        assert all(c.origin == "prior" and c.verified and c.scenes and c.domain == "grid" for c in loaded)
        assert load_prior(store, cache, domain="grid") == []
        store.corrections.delete(loaded[0].id)
        assert load_prior(store, cache, domain="grid") == []
        assert len(store.corrections.list()) == 4
        assert store.corrections.list(prior=False) == []


def test_a_new_store_takes_prior_replays_and_vectors_from_the_user_cache(tmp_path, monkeypatch):
    import prag.corrections.prior as prior_module

    monkeypatch.setenv("PRAG_CACHE", str(tmp_path / "cache"))
    with Store(tmp_path / "first.db") as store:
        first = load_prior(store, EmbeddingCache(store, minilm()), domain="grid")

    def no_replay(*args, **kwargs):
        raise AssertionError("a prior transcript was replayed again")

    class NoEncoding:
        name = minilm().name

        def encode(self, texts):
            raise AssertionError("a prior transcript's text was encoded again")

    monkeypatch.setattr(prior_module, "replay", no_replay)
    with Store(tmp_path / "second.db") as store:
        second = load_prior(store, EmbeddingCache(store, NoEncoding()), domain="grid")  # type: ignore[arg-type]
        texts = [t for c in second for t in list(c.instructions) + list(c.scenes)]
        kept = store.vectors(minilm().name, [text_hash(t) for t in texts])
    assert [(c.name, c.transcript, c.scenes, c.verified) for c in second] == [(c.name, c.transcript, c.scenes, c.verified) for c in first]
    assert len(kept) == len({text_hash(t) for t in texts})


def test_processes_starting_on_one_new_store_load_each_prior_transcript_once(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "shared.db"
    code = (
        "from prag.corrections.prior import load_prior\n"
        "from prag.retrieval.embed import EmbeddingCache, Encoder\n"
        "from prag.store import Store\n"
        f"with Store({str(path)!r}) as store:\n"
        "    print(len(load_prior(store, EmbeddingCache(store, Encoder()), domain='grid')))\n"
    )
    processes = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                 for _ in range(3)]
    outputs = [p.communicate() for p in processes]
    assert [p.returncode for p in processes] == [0, 0, 0], outputs
    assert sum(int(out) for out, _ in outputs) == 5  # each of the 5 grid transcripts loaded by one process
    with Store(path) as store:
        priors = store.corrections.list()
        assert len(priors) == 5 and len({c.name for c in priors}) == 5
        assert len(store.corrections.prior_loads()) == 5


def schema_2_row(kept: Correction) -> dict:
    """A correction's row as a store of schema 2 held it (no `steps`: migration 11 added it)."""
    row = kept.to_dict()
    for later in ("id", "steps"):
        row.pop(later)
    return {**row, "instructions": json.dumps(kept.instructions), "scenes": json.dumps(kept.scenes),
            "verified": int(kept.verified), "created_at": "2026-01-01T00:00:00"}


def test_migration_3_keeps_the_first_row_of_a_prior_transcript_loaded_twice(tmp_path, monkeypatch):
    path = tmp_path / "old.db"
    prior = dict(origin="prior", name="grid-prior/water", domain="grid", goal="water the plants",
                 instructions=["water the plants"])
    with monkeypatch.context() as patch:
        patch.setattr(store_module, "MIGRATIONS", store_module.MIGRATIONS[:2])
        patch.setattr(store_module, "SCHEMA_VERSION", 2)
        with Store(path) as old:  # what two racing runs left in a store of schema 2
            first = old.insert("corrections", schema_2_row(correction(**prior)))
            old.insert("corrections", schema_2_row(correction(**prior)))
            mine = old.insert("corrections", schema_2_row(correction()))
    with Store(path) as new:
        assert [c.id for c in new.corrections.list()] == [first, mine]
        with pytest.raises(CorrectionError, match="'grid-prior/water' is in .* already"):
            new.corrections.add(correction(**prior))


def invoke(*args: str):
    return CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "200"})


def test_corrections_cli_lists_shows_and_deletes(tmp_path):
    path = tmp_path / "s.db"
    with Store(path) as store:
        cache = EmbeddingCache(store, minilm())
        first = add_correction(store, cache, correction())
        second = add_correction(store, cache, correction(goal="cool a pot", instructions=["cool a pot"], verified=False, verify_note="action 2 'cool pot 1' is not admissible"))
    listed = invoke("corrections", "list", path, "--json")
    assert listed.exit_code == 0, listed.output
    assert [(c["id"], c["verified"]) for c in json.loads(listed.output)] == [(first, True), (second, False)]
    shown = invoke("corrections", "show", path, second)
    assert shown.exit_code == 0, shown.output
    assert "not admissible" in shown.output and "cool a pot" in shown.output and "It did not heat the apple." in shown.output
    table = invoke("corrections", "list", path)
    assert "put a hot apple in fridge." in table.output
    deleted = invoke("corrections", "delete", path, first)
    assert deleted.exit_code == 0 and f"deleted correction {first}" in deleted.output
    assert [c["id"] for c in json.loads(invoke("corrections", "list", path, "--json").output)] == [second]
    missing = invoke("corrections", "delete", path, first)
    assert missing.exit_code == 1 and f"no correction {first}" in missing.output
    assert invoke("corrections", "list", tmp_path / "none.db").exit_code == 1


def test_prag_query_shows_the_corrections_layer_first_with_its_scores(tmp_path):
    path = tmp_path / "s.db"
    with Store(path) as store:
        cache = EmbeddingCache(store, minilm())
        heat = add_correction(store, cache, correction())
        add_correction(store, cache, correction(goal="water the plants", instructions=["water the plants"], domain="grid"))
        store.add_run(run())
        cache.vectors([episode().goal] + [s.scene for s in episode().steps])
        store.add_episode(episode())
    result = invoke("query", path, "put a hot potato in the fridge", "--k", "1", "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert [(r["layer"], r.get("correction_id")) for r in rows] == [("correction", heat), ("episode", None)]
    assert rows[0]["score"] == pytest.approx(rows[0]["interaction_score"]) and rows[0]["verified"]
    table = invoke("query", path, "put a hot potato in the fridge", "--k", "2")
    assert "corrections by a person" in table.output and "instr. sim" in table.output
    assert table.output.index("corrections by a person") < table.output.index("top 2 episodes")
