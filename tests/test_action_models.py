"""Action models learned from experience (SAM): the rule on hand-made transitions (a precondition is
dropped when an application without it is seen, never invented), the model as PDDL, a model learned
from real ALFWorld episodes winning other real games in the engine, and the model's progressive
visibility, storage, export and import."""
from __future__ import annotations

import io
import json
from dataclasses import replace
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prag.agent.world.observed import Observed
from prag.agent.world.search import means_ends
from prag.agent.world_model import WorldModels, learn
from prag.cli import _register, app
from prag.envs.alfworld.env import TASK_TYPES, AlfworldEnv
from prag.envs.alfworld.gen import DIFFICULTIES, generate_game
from prag.envs.base import Task
from prag.envs.domain import ALFWORLD
from prag.envs.facts import HANDEMPTY, HOLDS, PLACED, AT, fluents
from prag.envs.learned import domain_pddl
from prag.envs.sam import ActionModel, lift
from prag.retrieval.index import Visibility
from prag.store import Store
from prag.store.action_models import ActionModelRecord
from prag.store.exchange import import_file, write_export
from prag.store.records import EpisodeRecord
from support import alfworld_home, oracle_episode, run

_register()


def take(thing: str, place: str, **also: frozenset) -> tuple[frozenset, frozenset]:
    """The facts before and after taking `thing` from `place` where the agent stands."""
    before = frozenset({(AT, place), (HANDEMPTY,), (PLACED, thing, place)}) | also.get("before", frozenset())
    after = frozenset({(AT, place), (HOLDS, thing)}) | also.get("after", frozenset())
    return before, after


def kinds(*names: str) -> frozenset:
    return frozenset((f"kind-{ALFWORLD.kind(n)}", n) for n in names)


# --- the rule, on hand-made transitions -----------------------------------------------------------


def test_preconditions_are_what_held_every_time_and_effects_what_changed() -> None:
    model = ActionModel("alfworld")
    before, after = take("apple 1", "countertop 1", before=frozenset({("is-clean", "countertop 1")}),
                         after=frozenset({("is-clean", "countertop 1")}))
    assert model.learn("take {0} from {1}", ["apple 1", "countertop 1"], "countertop 1", before, after,
                       kinds("apple 1", "countertop 1"))
    op = model.operators["take {0} from {1}"]
    assert ("is-clean", (1,)) in op.pre and ("kind-apple", (0,)) in op.pre  # all it has seen so far
    assert (0, 1) not in op.equal and (1, 2) in op.equal  # taken from where the agent stood
    # The place is where the agent stood too: its effects lift both ways (one, once they are merged).
    assert op.add == {(HOLDS, (0,))} and op.delete == {(HANDEMPTY, ()), (PLACED, (0, 1)), (PLACED, (0, 2))}
    # A second application without them drops both preconditions; what held both times stays.
    before, after = take("mug 1", "drawer 1")
    model.learn("take {0} from {1}", ["mug 1", "drawer 1"], "drawer 1", before, after, kinds("mug 1", "drawer 1"))
    assert ("is-clean", (1,)) not in op.pre and ("kind-apple", (0,)) not in op.pre
    assert {(PLACED, (0, 1)), (AT, (1,)), (HANDEMPTY, ())} <= op.pre
    assert op.applications == 2


def test_nothing_is_invented_and_a_refused_action_teaches_nothing() -> None:
    model = ActionModel("alfworld")
    before, after = take("apple 1", "countertop 1")
    unchanged = frozenset(before)
    assert not model.learn("take {0} from {1}", ["apple 1", "sinkbasin 1"], "countertop 1", unchanged, unchanged,
                           kinds("apple 1", "sinkbasin 1"))
    assert model.operators == {} and model.transitions == 0
    model.learn("take {0} from {1}", ["apple 1", "countertop 1"], "countertop 1", before, after,
                kinds("apple 1", "countertop 1"))
    op = model.operators["take {0} from {1}"]
    true_before = {(AT, (1,)), (AT, (2,)), (HANDEMPTY, ()), (PLACED, (0, 1)), (PLACED, (0, 2)),
                   ("kind-apple", (0,)), ("kind-countertop", (1,)), ("kind-countertop", (2,))}
    assert op.pre == true_before  # every precondition held in the state it was seen applied in
    # A fluent that never held before it is a negative precondition: never holding the thing already.
    assert (HOLDS, (0,)) in op.pre_not and not op.pre & op.pre_not


def test_an_effect_not_seen_every_time_is_no_effect() -> None:
    model = ActionModel("alfworld")
    for thing, warm in (("apple 1", True), ("apple 2", False)):
        before = frozenset({(AT, "microwave 1"), (HOLDS, thing)})
        after = before | ({("is-hot", thing)} if warm else {("is-open", "microwave 1")})
        model.learn("heat {0} with {1}", [thing, "microwave 1"], "microwave 1", before, after, kinds(thing, "microwave 1"))
    op = model.operators["heat {0} with {1}"]
    assert op.add == set()  # once hot, once not: nothing sure


def test_a_command_is_lifted_over_the_names_it_mentions() -> None:
    known = ["cup 1", "cup 10", "cabinet 10", "pan 1", "dustpan 1", "table", "wooden table", "red apple"]
    assert lift("take cup 1 from cabinet 10", known) == ("take {0} from {1}", ("cup 1", "cabinet 10"))
    assert lift("put pan 1 in/on dustpan 1", known) == ("put {0} in/on {1}", ("pan 1", "dustpan 1"))
    assert lift("put red apple on wooden table", known) == ("put {0} on {1}", ("red apple", "wooden table"))
    assert lift("look", known) == ("look", ())
    assert lift("move cup 1 to cup 1", known) is None  # one name twice: no injective binding


def test_the_model_round_trips_as_json_and_prints_as_pddl() -> None:
    model = ActionModel("alfworld")
    before, after = take("apple 1", "countertop 1")
    model.learn("take {0} from {1}", ["apple 1", "countertop 1"], "countertop 1", before, after, kinds("apple 1", "countertop 1"))
    again = ActionModel.from_json(model.to_json())
    assert again.to_json() == model.to_json()
    pddl = domain_pddl(again)
    assert "; take {0} from {1}  (1 applications)" in pddl
    # The parameter always equal to where the agent stood is one parameter.
    assert ":parameters (?p0 ?p1)" in pddl and "(at ?p1)" in pddl and "(not (placed ?p0 ?p1))" in pddl
    with pytest.raises(ValueError):
        ActionModel.from_json(json.dumps({"version": 0}))


# --- real games ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield from alfworld_home(tmp_path_factory)


@pytest.fixture(scope="module")
def training(generated: Path) -> list[EpisodeRecord]:
    """Two generated games of each task type, played by the oracle."""
    return [oracle_episode(generate_game(task_type, seed, generated, DIFFICULTIES["medium"]), task_type)
            for task_type in TASK_TYPES for seed in (1, 2)]


@pytest.mark.parametrize("task_type", TASK_TYPES)
def test_a_model_learned_from_real_episodes_wins_other_games_the_given_model_wins(
    generated: Path, training: list[EpisodeRecord], task_type: str
) -> None:
    model = learn(training, ALFWORLD)
    game = generate_game(task_type, 7, generated, DIFFICULTIES["medium"])
    env = AlfworldEnv(Task(game.parent.name, task_type, 0, str(game)), game)
    try:
        obs = env.reset()
        state = Observed.start(obs, ALFWORLD)
        for action in env.oracle_plan():  # explore as find-X would: see everything, change nothing
            if action.startswith(("go to ", "open ")):
                obs = env.step(action)
                state.update(action, obs)
        given = means_ends(obs.goal, state, obs.admissible, ALFWORLD)
        found = means_ends(obs.goal, state, obs.admissible, ALFWORLD, learned=model)
        assert given is not None and found is not None
        for action in found.steps:
            assert action in obs.admissible, f"{action!r} planned where it cannot be taken"
            obs = env.step(action)
            state.update(action, obs)
        assert obs.won
        assert len(found.steps) <= len(given.steps) + 1
    finally:
        env.close()


def test_an_empty_model_plans_nothing() -> None:
    state = Observed(ALFWORLD, "put a mug in cabinet.", location="middle of room", places=["cabinet 1", "desk 1"],
                     seen={"mug 1": "desk 1"})
    assert means_ends(state.goal, state, [], ALFWORLD, learned=ActionModel("alfworld")) is None
    assert means_ends(state.goal, state, [], ALFWORLD) is not None  # the given model plans it
    assert fluents(state) >= {(AT, "middle of room"), (HANDEMPTY,), (PLACED, "mug 1", "desk 1")}


def test_a_place_not_yet_visited_is_taken_as_every_first_sight_of_its_kind_was() -> None:
    # Heating was only ever seen with the microwave closed: a closed microwave is a precondition,
    # which a plan made before the agent stood at the microwave could not meet without a default.
    model = ActionModel("alfworld")
    model.first_seen("microwave", {"closed"})
    model.first_seen("drawer", {"closed"})
    model.first_seen("drawer", {"open"})  # some drawers are found open: no default for drawers
    at_microwave = frozenset({(AT, "microwave 1"), ("is-closed", "microwave 1"), (HOLDS, "potato 1")})
    at_counter = frozenset({(AT, "countertop 1"), ("is-closed", "microwave 1"), (HOLDS, "potato 1")})
    model.learn("go to {0}", ["microwave 1"], "countertop 1", at_counter, at_microwave, kinds("microwave 1", "countertop 1"))
    model.learn("go to {0}", ["countertop 1"], "microwave 1", at_microwave, at_counter, kinds("microwave 1", "countertop 1"))
    model.learn("heat {0} with {1}", ["potato 1", "microwave 1"], "microwave 1", at_microwave,
                at_microwave | {("is-hot", "potato 1")}, kinds("potato 1", "microwave 1"))
    hot = at_counter | {("is-hot", "potato 1")}
    model.learn("put {0} in/on {1}", ["potato 1", "countertop 1"], "countertop 1", hot,
                (hot - {(HOLDS, "potato 1")}) | {(HANDEMPTY,), (PLACED, "potato 1", "countertop 1")},
                kinds("potato 1", "countertop 1"))
    assert ("is-closed", (1,)) in model.operators["heat {0} with {1}"].pre
    state = Observed(ALFWORLD, "put a hot potato in countertop.", location="countertop 1",
                     places=["countertop 1", "microwave 1", "drawer 1"], held={"potato 1"})
    found = means_ends(state.goal, state, [], ALFWORLD, learned=model)
    assert found is not None and list(found.steps) == [
        "go to microwave 1", "heat potato 1 with microwave 1", "go to countertop 1", "put potato 1 in/on countertop 1"]
    model.first_states.clear()  # without the default, the closed microwave is never known: no plan
    assert means_ends(state.goal, state, [], ALFWORLD, learned=model) is None
    model.first_seen("microwave", {"closed"})
    assert ActionModel.from_json(model.to_json()).first_states == {"microwave": {"closed"}}


# --- the store --------------------------------------------------------------------------------------


def test_round_r_learns_from_rounds_before_it_and_the_runs_it_includes(tmp_path: Path, training: list[EpisodeRecord]) -> None:
    with Store(tmp_path / "s.db") as store:
        store.add_run(run("train"))
        store.add_run(run("test"))
        for episode in training[:4]:
            store.add_episode(episode)
        for n, episode in enumerate(training[4:8]):
            store.add_episode(EpisodeRecord(**{**episode.__dict__, "run_id": "test", "round": n % 2, "id": None}))
        models = WorldModels(store)
        assert models.model(Visibility("test", 0), ALFWORLD).episodes == 0
        assert models.model(Visibility("test", 1), ALFWORLD).episodes == 2  # round 0's two
        assert models.model(Visibility("test", 2), ALFWORLD).episodes == 4  # extended, not relearned
        assert WorldModels(store).model(Visibility("test", 1, ("train",)), ALFWORLD).episodes == 6
        everything = WorldModels(store).model(Visibility(), ALFWORLD)
        assert everything.episodes == 8
        assert everything.to_json() == learn(training[:8], ALFWORLD).to_json()


def test_an_episode_stored_as_a_correction_teaches_no_model_as_retrieval_never_sees_it(
    tmp_path: Path, training: list[EpisodeRecord]
) -> None:
    # The model learns from the episodes the round's retrieval may see (docs/records/action_models.md):
    # the agent's plays. Before the rule was one, it learned from every source.
    with Store(tmp_path / "s.db") as store:
        store.add_run(run("test"))
        store.add_episode(replace(training[0], run_id="test"))
        store.add_episode(replace(training[1], run_id="test", source="correction"))
        for visibility in (Visibility("test", 1), Visibility()):
            learned = WorldModels(store).model(visibility, ALFWORLD)
            assert learned.episodes == 1
            assert learned.to_json() == learn(training[:1], ALFWORLD).to_json()


def test_stored_models_are_versioned_exported_and_imported(tmp_path: Path, training: list[EpisodeRecord]) -> None:
    model = learn(training[:2], ALFWORLD)
    with Store(tmp_path / "a.db") as store:
        first = store.action_models.add(ActionModelRecord("alfworld", model.to_json(), model.episodes, model.transitions))
        assert store.action_models.save_if_new(ActionModelRecord("alfworld", model.to_json(), 2, 1)) is None
        bigger = learn(training[:4], ALFWORLD)
        second = store.action_models.save_if_new(ActionModelRecord("alfworld", bigger.to_json(), 4, 1, "r1", 2))
        assert (first.version, second and second.version) == (1, 2)
        assert store.action_models.get("alfworld").model == bigger.to_json()
        out = io.StringIO()
        write_export(store, out)
    (tmp_path / "a.jsonl").write_text(out.getvalue())
    with Store(tmp_path / "b.db") as other:
        result = import_file(other, tmp_path / "a.jsonl")
        assert result.action_models == 2
        assert [(r.version, r.run_id, r.round) for r in other.action_models.list()] == [(1, None, None), (2, "r1", 2)]
        assert import_file(other, tmp_path / "a.jsonl").action_models == 0  # already there
    bad = out.getvalue().replace('"model": "{', '"model": "[', 1)  # no model of any version
    (tmp_path / "bad.jsonl").write_text(bad)
    with Store(tmp_path / "c.db") as third:
        result = import_file(third, tmp_path / "bad.jsonl", skip_bad=True)
        assert result.action_models == 1 and any("not a learned action model" in line for line in result.bad)


def test_prag_model_prints_saves_and_lists(tmp_path: Path, training: list[EpisodeRecord]) -> None:
    path = tmp_path / "s.db"
    with Store(path) as store:
        store.add_run(run("train"))
        for episode in training:
            store.add_episode(episode)
    cli = CliRunner()
    shown = cli.invoke(app, ["model", str(path), "alfworld", "--save"])
    assert shown.exit_code == 0, shown.output
    assert f"of {len(training)} episodes (alfworld)" in shown.output and "; heat {0} with {1}" in shown.output
    assert "stored as alfworld v1" in shown.output
    listed = cli.invoke(app, ["model", str(path), "alfworld", "--list"], env={"COLUMNS": "200"})
    assert "the whole store" in listed.output and str(len(training)) in listed.output
    missing = cli.invoke(app, ["model", str(path), "alfworld", "--version", "5"])
    assert missing.exit_code != 0 and "no learned action model 'alfworld' version 5" in missing.output
