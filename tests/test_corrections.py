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
from prag.corrections.transcripts import parse
from prag.envs.spec import load_spec
from prag.retrieval.embed import EmbeddingCache, text_hash
from prag.store import Store
from prag.store.corrections import (
    Correction,
    CorrectionError,
    add_correction,
    delete_correction,
    get_correction,
    list_corrections,
)

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
        with Store(path) as old:
            old.add_run(run())
            episode_id = old.add_episode(episode())
            assert "corrections" not in old.db.table_names()
    with Store(path) as new:
        assert new.schema_version == 2
        assert [m["name"] for m in new.migrations()] == ["runs, episodes, steps, embeddings", "corrections, prior_loads"]
        assert new.episode(episode_id).goal == episode().goal
        assert list_corrections(new) == []


def test_a_correction_keeps_its_provenance_and_vectors_until_deleted(tmp_path):
    with Store(tmp_path / "s.db") as store:
        store.add_run(run())
        source = store.add_episode(episode())
        cache = EmbeddingCache(store, minilm())
        stored = correction(source_episode=source)
        correction_id = add_correction(store, stored, cache)
        assert correction_id == stored.id and stored.created_at
    with Store(tmp_path / "s.db", create=False) as store:  # reopened from disk
        back = get_correction(store, correction_id)
        assert back == stored
        vectors = store.vectors(minilm().name, [text_hash(t) for t in stored.instructions + stored.scenes])
        assert len(vectors) == 4  # instructions and scenes are embedded through `embeddings`
        assert delete_correction(store, correction_id).goal == stored.goal
        assert list_corrections(store) == []
        with pytest.raises(CorrectionError, match="no correction"):
            get_correction(store, correction_id)
        with pytest.raises(CorrectionError, match="no correction"):
            delete_correction(store, correction_id)


def test_bad_corrections_are_refused(tmp_path):
    with Store(tmp_path / "s.db") as store:
        cache = EmbeddingCache(store, minilm())
        with pytest.raises(CorrectionError, match="unknown origin"):
            add_correction(store, correction(origin="rumour"), cache)
        with pytest.raises(CorrectionError, match="at least one instruction"):
            add_correction(store, correction(instructions=[]), cache)
        with pytest.raises(Exception, match="no episode 99"):
            add_correction(store, correction(source_episode=99), cache)
        assert list_corrections(store) == []


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
        delete_correction(store, loaded[0].id)
        assert load_prior(store, cache, domain="grid") == []
        assert len(list_corrections(store)) == 4
        assert list_corrections(store, prior=False) == []


def invoke(*args: str):
    return CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "200"})


def test_corrections_cli_lists_shows_and_deletes(tmp_path):
    path = tmp_path / "s.db"
    with Store(path) as store:
        cache = EmbeddingCache(store, minilm())
        first = add_correction(store, correction(), cache)
        second = add_correction(store, correction(goal="cool a pot", instructions=["cool a pot"], verified=False, verify_note="action 2 'cool pot 1' is not admissible"), cache)
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
        heat = add_correction(store, correction(), cache)
        add_correction(store, correction(goal="water the plants", instructions=["water the plants"], domain="grid"), cache)
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
