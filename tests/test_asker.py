"""The learned ask policy (When2Ask): the training environment's reward, PPO training on tiny grid
tasks, the trained policy kept in the store, and `prag train-asker`.

The agent is the real P-RAG agent over a real store file and the real grid world; the LLM is a
scripted stand-in that replays the winning route (it answers, at step n, the n-th action of the
task's solver plan). A round 0 played with it stores a won episode of each task, which the agent
then follows as a plan: every ask returns the plan's next step, so each one costs lambda and
gains nothing. The policy has to learn that.
"""
from __future__ import annotations

import signal
import tempfile

import numpy as np
import pytest
from conftest import plan_follower, plans_of, stop_at_first_llm_call
from support import minilm
from typer.testing import CliRunner

from prag.agent.sources.mediator import MediatorState
from prag.cli import _register, app
from prag.envs.spec import load_spec
from prag.llm.scripted import ScriptedLLM
from prag.run.asker import (
    ASK,
    FOLLOW,
    AskEnv,
    decider,
    evaluate,
    learned_policy,
    prag_agents,
    train_asker,
)
from prag.run.config import ExperimentConfig, RetrievalConfig, RunConfig
from prag.run.runner import Runner, start_run
from prag.store import Store
from prag.store.ask_policies import AskPolicyError, AskPolicyRecord

# Two small houses whose solver plans take 9 and 10 steps.
SPEC = """name = "tiny-grid"
env = "grid"
max_steps = 15
[params]
tasks = ["wash_dishes", "collect_toys"]
per_task = 1
seed = 0
size = 5
"""
PENALTY = 0.1
GAMMA = 0.99


def route_replayer(spec_path: str) -> ScriptedLLM:
    """Stand-in LLM that answers, for the goal in its prompt, the next action of the solver's plan."""
    return ScriptedLLM(plan_follower(plans_of(spec_path)))


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """A store holding round 0 of the tiny set, played (and won) by the route replayer."""
    root = tmp_path_factory.mktemp("asker")
    spec = root / "tiny-grid.toml"
    spec.write_text(SPEC)
    path = root / "s.db"
    config = RunConfig(ExperimentConfig(spec=str(spec), rounds=1), RetrievalConfig(prior=False))
    with Store(path) as store:
        record = start_run(store, config, "round0")
        Runner(store, record, config, llm=route_replayer(str(spec)), encoder=minilm()).play()
        assert [e.won for e in store.episodes(record.id)] == [True, True]
    return spec, path


def ask_env(store: Store, spec_path) -> AskEnv:
    spec = load_spec(str(spec_path))
    source = spec.open()
    agents = prag_agents(store, spec, route_replayer(str(spec_path)), minilm())
    return AskEnv(source, source.tasks(), agents, max_steps=spec.max_steps, penalty=PENALTY, gamma=GAMMA)


def test_an_ask_returning_the_plan_is_penalised_and_a_win_is_rewarded(played):
    spec, path = played
    with Store(path) as store:
        env = ask_env(store, spec)
        rewards = {}
        for action in (ASK, FOLLOW):
            env.rewind()
            features, _ = env.reset()
            assert features[1] == 1.0  # the mediator sees a plan (the stored win) from the first step
            got, over = [], False
            while not over:
                _, reward, over, _, info = env.step(action)
                got.append(reward)
            rewards[action] = (got, info["outcome"])
        env.close()
    asked, asked_outcome = rewards[ASK]
    followed, followed_outcome = rewards[FOLLOW]
    assert asked_outcome.won and followed_outcome.won and asked_outcome.steps == followed_outcome.steps
    steps = asked_outcome.steps
    # Asking every step: each ask answered the plan's step and cost lambda; the win paid gamma ** steps.
    assert asked_outcome.same_plan_asks == asked_outcome.asks == steps
    assert asked[:-1] == [-PENALTY] * (steps - 1)
    assert asked[-1] == pytest.approx(GAMMA**steps - PENALTY)
    # Following the plan: no asks, nothing but the win.
    assert followed_outcome.asks == 0 and followed == [0.0] * (steps - 1) + [pytest.approx(GAMMA**steps)]
    assert followed_outcome.reward - asked_outcome.reward == pytest.approx(PENALTY * steps)


@pytest.fixture(scope="module")
def trained(played, tmp_path_factory):
    spec, path = played
    scratch = tmp_path_factory.mktemp("scratch")
    with Store(path) as store, pytest.MonkeyPatch.context() as patch:
        patch.setattr(tempfile, "tempdir", str(scratch))
        record, training = train_asker(
            store, load_spec(str(spec)), route_replayer(str(spec)), minilm(), timesteps=512, penalty=PENALTY,
            gamma=GAMMA, seed=0, name="tiny",
        )
    return record, training, scratch


def test_training_leaves_nothing_in_the_temporary_directory(trained):
    *_, scratch = trained
    assert list(scratch.iterdir()) == []  # SB3's default logger made a directory there per training


def test_training_asks_less_and_earns_more_on_the_same_episodes(trained):
    record, training, _ = trained
    before, after = training.before, training.after
    assert before.episodes == after.episodes == 2 and before.won == after.won == 2
    assert before.asks == before.same_plan_asks > 5  # asking every step pays lambda per step
    assert after.asks < before.asks / 2
    assert after.mean_return > before.mean_return + PENALTY * 2
    curve = [point["mean_return"] for point in record.curve]
    assert len(curve) >= 3 and np.mean(curve[-2:]) > curve[0]


def test_the_stored_policy_decides_as_the_trained_one(trained, played):
    record, training, _ = trained
    spec, path = played
    with Store(path) as store:  # a fresh store object: the policy comes from the file
        stored = store.ask_policies.get("tiny")
        env = ask_env(store, spec)
        replayed = learned_policy(stored)
        outcomes = evaluate(env, replayed.decide)
        env.close()
    assert (stored.version, stored.spec, stored.tasks, stored.llm) == (1, "tiny-grid", ["wash_dishes-0", "collect_toys-0"], "scripted")
    assert (stored.timesteps, stored.penalty, stored.gamma, stored.seed) == (512, PENALTY, GAMMA, 0)
    assert stored.curve == record.curve and stored.extra["after"]["asks"] == training.after.asks
    assert stored.extra["sources"] == ["experience", "llm"]
    in_memory = decider(training.model)  # the network as training left it, never saved
    states = np.random.default_rng(0).random((200, MediatorState.FEATURES), dtype=np.float32)
    decisions = [replayed.decide(s) for s in states]
    assert decisions == [in_memory(s) for s in states]
    assert sum(o.asks for o in outcomes) / len(outcomes) == training.after.asks
    assert sum(o.reward for o in outcomes) / len(outcomes) == pytest.approx(training.after.mean_return)


def test_a_new_training_of_a_name_is_its_next_version_and_old_ones_stay(tmp_path):
    def record(seed: int) -> AskPolicyRecord:
        return AskPolicyRecord(name="a", spec="s", tasks=["t"], llm="scripted", timesteps=2, penalty=0.1, gamma=1.0,
                               seed=seed, features=MediatorState.FEATURES, model=f"model {seed}".encode())

    with Store(tmp_path / "s.db") as store:
        assert [store.ask_policies.add(record(seed)).version for seed in (7, 8)] == [1, 2]
    with Store(tmp_path / "s.db") as store:
        assert store.ask_policies.get("a").model == b"model 8"
        assert store.ask_policies.get("a", 1).model == b"model 7"
        with pytest.raises(AskPolicyError, match=r"no ask policy 'b' .* \(stored: a v1, a v2\): train one with `prag train-asker`"):
            store.ask_policies.get("b")


def test_prag_train_asker_trains_stores_and_prints_the_curve(played, monkeypatch):
    spec, path = played
    monkeypatch.setattr("prag.cli.common.test_llm", lambda llm: route_replayer(str(spec)))
    _register()
    result = CliRunner().invoke(
        app, ["train-asker", str(path), str(spec), "--timesteps", "64", "--penalty", "0.2", "--seed", "3",
              "--name", "cli", "--limit", "1", "--sources", "experience,search,llm"],
        env={"COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    assert "reward curve" in result.output and "always" in result.output and "learned" in result.output
    assert "stored ask policy cli version 1" in result.output
    with Store(path) as store:
        stored = store.ask_policies.get("cli")
    assert (stored.tasks, stored.timesteps, stored.penalty, stored.seed) == (["wash_dishes-0"], 64, 0.2, 3)
    assert stored.curve and stored.extra["before"]["episodes"] == 1
    assert stored.extra["sources"] == ["experience", "search", "llm"]  # what the agents drew on is kept


def test_prag_train_asker_on_a_store_without_plans_says_what_to_do(played, tmp_path, monkeypatch):
    spec, _ = played
    monkeypatch.setattr("prag.cli.common.test_llm", lambda llm: route_replayer(str(spec)))
    Store(tmp_path / "empty.db").close()
    _register()
    result = CliRunner().invoke(app, ["train-asker", str(tmp_path / "empty.db"), str(spec), "--timesteps", "8"])
    assert result.exit_code == 1
    assert "no task gave the agent a plan to follow" in result.output and "Traceback" not in result.output


def test_sigterm_stops_prag_train_asker_as_ctrl_c_does_and_stores_no_policy(played, tmp_path):
    # Before: training died of the signal (exit -15).
    spec, path = played
    code, err = stop_at_first_llm_call(tmp_path, signal.SIGTERM, "train-asker", str(path), str(spec),
                                       "--timesteps", "64", "--name", "stopped", "--sources", "llm")
    assert code == 143 and "interrupted by SIGTERM" in err and "Traceback" not in err, err
    with Store(path) as store:
        assert all(policy.name != "stopped" for policy in store.ask_policies.list())
