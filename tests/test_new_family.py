"""A new family in one place (issue 20): the pantry of tests/families, added as a user adds one, with
`register` or an installed package's entry point, then played end to end by the real runner into a
real store with a random stand-in as the LLM. It gives no action model and no placement table, so
what the agent plans with from round 1 on is the action model learned from round 0's episodes."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from support import minilm

from prag.agent.config import AgentConfig
from prag.envs import registry
from prag.envs.spec import load_spec
from prag.errors import PragError, SpecError
from prag.llm.scripted import RandomChoiceLLM
from prag.run.config import ExecutionConfig, ExperimentConfig, RunConfig
from prag.run.runner import Runner, start_run
from prag.store import Store
from tests.families import pantry

SPEC = Path(__file__).parent / "families" / "pantry.toml"


@pytest.fixture
def families(monkeypatch: pytest.MonkeyPatch) -> dict[str, registry.Family]:
    """The registry's families for this test: what it registers is gone after it."""
    scoped = dict(registry.FAMILIES)
    monkeypatch.setattr(registry, "FAMILIES", scoped)
    return scoped


def test_an_unknown_family_says_how_to_add_one(families) -> None:
    with pytest.raises(SpecError, match=r"unknown env 'pantry': use one of alfworld, .*add your own family"):
        registry.domain("pantry")
    with pytest.raises(SpecError, match=r"pantry.toml: unknown env 'pantry'"):
        load_spec(str(SPEC))


def test_registered_the_family_opens_from_its_spec_and_its_plan_wins(families) -> None:
    registry.register("pantry", pantry.from_params, pantry.DOMAIN)
    registry.register("pantry", pantry.from_params, pantry.DOMAIN)  # the same again changes nothing
    with pytest.raises(PragError, match="registered already"):
        registry.register("pantry", pantry.from_params, pantry.DOMAIN, thread_safe=False)
    source = load_spec(str(SPEC)).open()
    env = source.make(source.tasks()[0])
    first = env.reset()
    assert first.location is None and not first.scene_triples and "go to box 1" in first.admissible
    played = [env.step(action) for action in env.oracle_plan()]
    assert [o.won for o in played] == [False] * (len(played) - 1) + [True]
    # What its Domain reads of the scene: what the agent held, where things are, the box's state.
    assert pantry.DOMAIN.placed(played[-1].scene_triples)
    assert pantry.DOMAIN.facts_of_goal(first.goal) is not None and pantry.DOMAIN.needs(first.goal)


def test_an_installed_package_adds_a_family_by_entry_point(families, tmp_path, monkeypatch) -> None:
    """A distribution's `prag.families` entry points, as pip installs them (a dist-info on sys.path)."""
    info = tmp_path / "pantry_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pantry-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[prag.families]\npantry = tests.families.pantry:FAMILY\nbroken = tests.families.pantry:DOMAIN\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert {"pantry", "broken"} <= set(registry.names())
    assert load_spec(str(SPEC)).open().tasks() and registry.domain("pantry") is pantry.DOMAIN
    assert registry.thread_safe("pantry")
    with pytest.raises(SpecError, match="names Domain, not a prag.envs.registry.Family"):
        registry.family("broken")


def test_three_rounds_learn_a_model_that_plans(families, tmp_path) -> None:
    """Round 0 knows no model: find-X and the random stand-in choose every step. Rounds 1 and 2 plan
    with the model learned from the rounds before (decisions from "search"), win more games and
    ask the stand-in less. Experience plans are left out, so the model is what learns."""
    assert pantry.DOMAIN.action_model is None and pantry.DOMAIN.holders is None
    registry.register("pantry", pantry.from_params, pantry.DOMAIN)
    config = RunConfig(ExperimentConfig(spec=str(SPEC), rounds=3, llm="random-choice"),
                       agent=AgentConfig(ask="hard-coded", sources=("search", "llm")),
                       execution=ExecutionConfig(answer_cache=False))
    with Store(tmp_path / "pantry.db") as store:
        run = start_run(store, config)
        Runner(store, run, config, llm=RandomChoiceLLM(), encoder=minilm()).play()  # type: ignore[arg-type]
        episodes = list(store.episodes(run.id))
        models = store.action_models.list()
    rounds = [[e for e in episodes if e.round == r] for r in range(3)]
    chosen = [Counter(d.source for e in played for d in e.extra.decisions) for played in rounds]
    won = [sum(e.won for e in played) for played in rounds]
    calls_a_step = [sum(e.llm_calls for e in played) / sum(e.n_actions for e in played) for played in rounds]

    assert chosen[0]["search"] == 0 and chosen[0]["find"] and chosen[0]["llm"]
    assert chosen[1]["search"] and chosen[2]["search"]
    assert won[2] > won[0] and calls_a_step[2] < calls_a_step[0] / 2
    # Games won by the model's plan: their last step was search's.
    assert any(e.won and e.extra.decisions[-1].source == "search" for e in rounds[1] + rounds[2])
    # The model rounds 1 and 2 planned with is kept in the store, learned from rounds before them.
    assert models and {m.family for m in models} == {"pantry"}
