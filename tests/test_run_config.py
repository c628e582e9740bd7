"""A run's config: recorded whole and read back, version 1 (flat) converted, and what round 0
depends on derived from the structure."""
from __future__ import annotations

import json

import pytest
from conftest import write_spec

from prag.agent.config import AgentConfig
from prag.agent.config import PromptLimits
from prag.errors import ConfigError, PragError
from prag.run.config import (
    CONFIG_VERSION,
    ExecutionConfig,
    ExperimentConfig,
    RetrievalConfig,
    RunConfig,
    prag_version,
    round0_settings,
)
from prag.run.runner import start_run
from prag.store import Store
from prag.store.records import RunRecord
from prag.store.visibility import Visibility

# Every setting away from its default, in every section.
ODD = RunConfig(
    ExperimentConfig(spec="a.toml", rounds=5, train="b.toml", limit=2, max_steps=9, llm="openai:m", seed=4, round0_from="r0"),
    RetrievalConfig(mode="goal", k=1, embedding_model="/models/e", include_runs=("x", "y"), corrections=False, corrections_k=2, prior=False),
    AgentConfig(think=True, constrained=False, max_reasks=1, loop_limit=3, keep_margin=0.5, thought_tokens=10, action_tokens=12,
                places=("llm",),
                limits=PromptLimits(example_steps=5, observation_chars=50, correction_steps=6)),
    ExecutionConfig(workers=3, llm_timeout=9.5, llm_retries=0, executor="ray", ray_address="head:6379",
                    llm_urls=("http://a:8000/v1", "http://b:8000/v1")),
)


def leaves(data: dict, prefix: str = "") -> set[str]:
    return {key for name, value in data.items()
            for key in (leaves(value, f"{prefix}{name}.") if isinstance(value, dict) else {f"{prefix}{name}"})}


def test_the_whole_config_is_recorded_and_read_back():
    recorded = json.loads(json.dumps(ODD.to_dict()))  # as the store keeps it
    assert recorded["version"] == CONFIG_VERSION and recorded["prag"] == prag_version()
    assert RunConfig.from_dict(recorded) == ODD
    # The agent's settings that no flat config recorded, among them.
    assert {"agent.max_reasks", "agent.loop_limit", "agent.keep_margin", "agent.thought_tokens", "agent.action_tokens",
            "agent.limits.example_steps"} <= leaves(recorded)


def test_a_flat_config_of_the_first_prag_is_converted():
    flat = {
        "spec": "a.toml", "rounds": 5, "k": 1, "mode": "goal", "llm": "openai:m", "max_steps": 9, "workers": 3, "seed": 4,
        "train": "b.toml", "include_runs": ["x", "y"], "think": True, "constrained": False, "embedding_model": "/models/e",
        "limit": 2, "corrections": False, "corrections_k": 2, "prior": False, "round0_from": "r0",
    }
    assert RunConfig.from_dict(flat) == RunConfig(
        ODD.experiment, ODD.retrieval, AgentConfig(think=True, constrained=False), ExecutionConfig(workers=3),
    )
    # The oldest ones lack the later keys: those take their defaults.
    assert RunConfig.from_dict({"spec": "a.toml", "rounds": 2}) == RunConfig(ExperimentConfig(spec="a.toml", rounds=2))


def test_unreadable_configs_say_which_prag_wrote_them():
    with pytest.raises(ConfigError, match=r"config version 7, written by prag 3\.0; this is prag .* reads versions 1 to 2"):
        RunConfig.from_dict({"version": 7, "prag": "3.0", "experiment": {"spec": "a"}})
    with pytest.raises(ConfigError, match=r"written by prag 0\.1\.0, name settings .*\(agent\.beam, execution\.gpu\)"):
        RunConfig.from_dict({"version": 2, "prag": "0.1.0", "experiment": {"spec": "a"}, "agent": {"beam": 2}, "execution": {"gpu": 1}})
    with pytest.raises(ConfigError, match="retrieval.k"):
        RunConfig.from_dict({"version": 2, "prag": "0.1.0", "experiment": {"spec": "a"}, "retrieval": {"k": "three"}})


def test_round_0_depends_on_everything_but_how_it_runs_and_what_only_later_rounds_use():
    assert set(leaves(ODD.to_dict())) - set(round0_settings(ODD)) - {"version", "prag"} == {
        "experiment.rounds", "experiment.round0_from",  # how many rounds follow, and where round 0 came from
        "retrieval.mode", "retrieval.k",  # round 0 retrieves nothing of the run's own
        "execution.workers", "execution.llm_timeout", "execution.llm_retries", "execution.answer_cache",  # how
        "execution.executor", "execution.ray_address", "execution.llm_urls",
        # when to ask: a round 0 in which every step was asked stands for any policy's (checked on use)
        "agent.ask", "agent.ask_probability", "agent.asker", "agent.plan_pool",
        "agent.max_rejections",  # a person's patience: no person plays a run's rounds
    }


def test_a_round_0_played_with_other_agent_settings_cannot_be_reused(tmp_path):
    spec = write_spec(tmp_path, "one", ["throw_away_trash"])
    with Store(tmp_path / "s.db") as store:
        start_run(store, RunConfig(ExperimentConfig(spec=spec), agent=AgentConfig(loop_limit=2)), "first")
        branch = RunConfig(ExperimentConfig(spec=spec, round0_from="first"), RetrievalConfig(mode="goal"))
        with pytest.raises(PragError, match=r"run first played round 0 with other settings \(agent\.loop_limit\)"):
            start_run(store, branch)
        # A flat config of the first prag stands for its defaults: same settings, so only the
        # missing round 0 is left to refuse.
        store.add_run(RunRecord(id="flat", spec="one", llm="local", mode="prag", k=3, rounds=3, config={"spec": spec}))
        with pytest.raises(PragError, match="run flat has not finished round 0"):
            start_run(store, RunConfig(ExperimentConfig(spec=spec, round0_from="flat")))


@pytest.mark.parametrize(
    ("config", "option"),
    [
        (RunConfig(ExperimentConfig(spec="a", rounds=0)), "--rounds"),
        (RunConfig(ExperimentConfig(spec="a"), RetrievalConfig(k=-1)), "--k"),
        (RunConfig(ExperimentConfig(spec="a"), execution=ExecutionConfig(workers=0)), "--workers"),
        (RunConfig(ExperimentConfig(spec="a"), execution=ExecutionConfig(llm_timeout=0)), "--llm-timeout"),
        (RunConfig(ExperimentConfig(spec="a"), execution=ExecutionConfig(llm_retries=-1)), "--llm-retries"),
        (RunConfig(ExperimentConfig(spec="a"), RetrievalConfig(mode="sg")), "sg"),
        (RunConfig(ExperimentConfig(spec="a"), agent=AgentConfig(ask="sometimes")), "--ask"),
        (RunConfig(ExperimentConfig(spec="a"), agent=AgentConfig(ask="random", ask_probability=2)), "--ask-p"),
        (RunConfig(ExperimentConfig(spec="a"), agent=AgentConfig(asker="mine")), "--ask learned"),
        (RunConfig(ExperimentConfig(spec="a"), execution=ExecutionConfig(executor="dask")), "--executor"),
        (RunConfig(ExperimentConfig(spec="a"), execution=ExecutionConfig(ray_address="head:6379")), "--executor ray"),
        (RunConfig(ExperimentConfig(spec="a"), execution=ExecutionConfig(llm_urls=("http://a/v1",))), "--llm openai"),
    ],
)
def test_settings_no_run_can_use_are_refused_naming_the_option(config, option):
    with pytest.raises(PragError, match=option):
        config.check()


def test_a_round_sees_the_runs_earlier_rounds_and_the_runs_it_includes() -> None:
    """What every reader of a round is given (retrieval, places, readings, the action model)."""
    assert ODD.retrieval.visibility("r", 2) == Visibility("r", 2, ("x", "y"))
    assert RetrievalConfig().visibility("r", 0) == Visibility("r", 0, ())
