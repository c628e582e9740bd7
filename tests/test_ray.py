"""`prag run --executor ray` on a local Ray cluster (two CPUs, started once for the module), with a
plan-following scripted stand-in LLM on the real grid world: what it stores is what the threads
store; a worker killed mid-episode (SIGKILL from inside its LLM call) and a driver killed
mid-round (SIGKILL of the CLI) leave every task once in its round; a round retrieves from its
own snapshot; episodes spread over two fake OpenAI servers."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import (
    TESTS,
    FakeOpenAI,
    plan_follower,
    plans_of,
    signal_when_stored,
    start,
    write_spec,
)
from support import minilm

from prag.llm.scripted import ScriptedLLM
from prag.run.config import (
    ExecutionConfig,
    ExperimentConfig,
    RetrievalConfig,
    RunConfig,
)
from prag.run.runner import Runner, resume_config, start_run
from prag.store import Store
from prag.store.episode_extra import EpisodeExtra, GoalReading

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.ray


@pytest.fixture(scope="module")
def ray_cluster() -> str:
    """A local Ray cluster, started once (only this module uses one) and stopped after its
    tests; its address, for drivers in other processes."""
    import conftest

    ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING", log_to_driver=False)
    # The stand-in LLMs are functions of the test files, which workers cannot import: ship them whole.
    for module in (conftest, sys.modules[__name__]):
        ray.cloudpickle.register_pickle_by_value(module)
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()


def config(spec: str, executor: str, rounds: int = 1, workers: int = 2, mode: str = "none") -> RunConfig:
    # No corrections: embedding the prior transcripts' instructions would load MiniLM in every
    # worker, which only the test of retrieval needs.
    return RunConfig(ExperimentConfig(spec=spec, rounds=rounds), RetrievalConfig(mode=mode, k=2, corrections=False),
                     execution=ExecutionConfig(workers=workers, executor=executor))


def play(db: Path, run_config: RunConfig, llm) -> list:
    """Play a run into `db`; its episodes as (round, task, won, actions, retrieved (round, task))."""
    with Store(db) as store:
        run = start_run(store, run_config, "r")
        Runner(store, run, run_config, llm=llm, encoder=minilm()).play()
        episodes = list(store.episodes("r"))
        keys = {e.id: (e.round, e.task_id) for e in episodes}
        return sorted((e.round, e.task_id, e.won, [s.action for s in e.steps], [keys[i] for i in e.extra.retrieved])
                      for e in episodes)


def test_a_run_through_ray_stores_what_the_threads_store_each_round_from_its_own_snapshot(tmp_path, ray_cluster):
    spec = write_spec(tmp_path, "same", ["throw_away_trash", "collect_toys"])
    plans = plans_of(spec)
    threads = play(tmp_path / "threads.db", config(spec, "threads", rounds=3, workers=1, mode="prag"), ScriptedLLM(plan_follower(plans)))
    rayed = play(tmp_path / "ray.db", config(spec, "ray", rounds=3, mode="prag"), ScriptedLLM(plan_follower(plans)))
    assert rayed == threads
    assert len(rayed) == 6 and all(won for _, _, won, _, _ in rayed)
    # Round r retrieves from rounds < r only, and from all of them: the snapshot is its round's.
    for round_, _, _, _, retrieved in rayed:
        assert all(r < round_ for r, _ in retrieved)
        assert len(retrieved) == min(2, 2 * round_)
    assert any(r == 1 for round_, _, _, _, retrieved in rayed if round_ == 2 for r, _ in retrieved)
    # The answer cache: the workers' new answers reached the store, as the threads' did.
    with Store(tmp_path / "threads.db") as a, Store(tmp_path / "ray.db") as b:
        assert a.answers.snapshot() == b.answers.snapshot() != {}


def test_a_rounds_snapshot_carries_the_goal_readings_verified_before_it(tmp_path, ray_cluster):
    """Ray workers have no store: the readings a goal reader may reuse come with the round."""
    from prag.envs.spec import load_spec
    from prag.retrieval.embed import EmbeddingCache
    from prag.run.episode import Phase
    from prag.run.ray_executor import RayRounds
    from prag.store.records import EpisodeRecord, StepRecord

    spec = write_spec(tmp_path, "pair", ["throw_away_trash", "collect_toys"])
    run_config = config(spec, "ray", rounds=2)
    with Store(tmp_path / "s.db") as store:
        run = start_run(store, run_config, "r")
        store.add_episode(EpisodeRecord(
            run_id="r", round=0, task_id="a", task_type="", goal="Put a clean bowl in a cabinet.", won=True,
            steps=[StepRecord(0, None, "", "")],
            extra=EpisodeExtra(reading=GoalReading("Put a clean bowl in a cabinet.", "put a clean bowl in cabinet", "llm"))))
        runner = Runner(store, run, run_config, llm=ScriptedLLM(["look"]), encoder=minilm())
        loaded = load_spec(spec)
        rounds = RayRounds(runner)
        try:
            seen = {r: rounds._snapshot(Phase(r, loaded, [], None)) for r in (0, 1)}  # type: ignore[arg-type]
        finally:
            rounds.close()
        cache = EmbeddingCache(store, minilm(), read_only=True)
        recall = {r: snapshot.recall(cache)(None)("Put a clean bowl into a cabinet.") for r, snapshot in seen.items()}  # type: ignore[arg-type]
    assert recall[0] == []  # round 0 sees nothing
    assert [hit.sentence for hit in recall[1]] == ["put a clean bowl in cabinet"]


def killing(answer, goal: str, marker: Path):
    """`answer`, except that the first call for `goal` after its second action kills the worker
    process it runs in (SIGKILL), once: `marker` keeps the pid."""

    def kill(messages: list) -> str:
        task = next(m["content"] for m in reversed(messages) if m["content"].startswith("Your goal"))
        if task.startswith(f"Your goal: {goal}\n") and task.count("\n> ") >= 2 and not marker.exists():
            marker.write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)
        return answer(messages)

    return kill


def test_a_worker_killed_mid_episode_loses_only_that_episode_which_is_played_again(tmp_path, ray_cluster):
    spec = write_spec(tmp_path, "kill", ["throw_away_trash", "collect_toys"], per_task=2)
    plans = plans_of(spec)
    marker = tmp_path / "killed"
    victim = sorted(plans)[1]
    with Store(tmp_path / "s.db") as store:
        run_config = config(spec, "ray")
        run = start_run(store, run_config, "r")
        Runner(store, run, run_config, llm=ScriptedLLM(killing(plan_follower(plans), victim, marker)), encoder=minilm()).play()
        episodes = list(store.episodes("r"))
    pid = int(marker.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # the worker really died
    assert sorted(e.task_id for e in episodes) == sorted({e.task_id for e in episodes}) and len(episodes) == 4
    replayed = next(e for e in episodes if e.goal == victim)
    # Played again from its start: the whole plan, every step once.
    assert replayed.won and [s.t for s in replayed.steps] == list(range(len(plans[victim]) + 1))


HELD_RAY_CLI = """
import sys
from pathlib import Path
sys.path.insert(0, {tests!r})
import ray
import conftest
from conftest import held_after, plan_follower, plans_of
from prag.cli import common, main
from prag.llm.scripted import ScriptedLLM

ray.cloudpickle.register_pickle_by_value(conftest)  # the stand-in runs in the workers
common.test_llm = lambda spec: ScriptedLLM(held_after(plan_follower(plans_of({spec!r})), Path({db!r}), {episodes}))
sys.argv[0] = "prag"
main()
"""


def held_ray_run(directory: Path, spec: str, db: Path, episodes: int, rounds: int, cluster: str) -> list[str]:
    """The command line of a `prag run` of run "victim" on `cluster` (two workers) whose stand-in
    LLM holds every call once `episodes` episodes are stored in `db`. Without the answer cache:
    round 1 of `--mode none` asks round 0's prompts again, and answers served from the cache
    never reach the held stand-in (round 1 then finished before the kill)."""
    script = directory / "held_prag.py"
    script.write_text(HELD_RAY_CLI.format(tests=str(TESTS), spec=spec, db=str(db), episodes=episodes))
    return [sys.executable, str(script), "run", spec, "--store", str(db), "--rounds", str(rounds), "--mode", "none",
            "--name", "victim", "--no-corrections", "--executor", "ray", "--ray-address", cluster, "--workers", "2",
            "--ask", "always", "--no-answer-cache"]


def test_a_driver_killed_mid_round_resumes_with_each_task_once(tmp_path, ray_cluster):
    spec = write_spec(tmp_path, "driver", ["throw_away_trash", "collect_toys"], per_task=2)
    db = tmp_path / "s.db"
    # Held once 5 episodes are stored: the kill lands in round 1, whatever the machine's speed.
    command = held_ray_run(tmp_path, spec, db, 5, rounds=2, cluster=ray_cluster)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(TESTS.parent), os.environ.get("PYTHONPATH")]))}
    process = start(command, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    signal_when_stored(process, db, 5, signal.SIGKILL)
    with Store(db) as store:
        # Round 0 whole, round 1 cut short (an episode past its last LLM call may land before the kill).
        rounds = [e.round for e in store.episodes("victim")]
        assert rounds.count(0) == 4 and 1 <= rounds.count(1) < 4
        run, resumed = resume_config(store, "victim")
        assert resumed.execution.executor == "ray" and resumed.execution.ray_address == ray_cluster
        Runner(store, run, resumed, llm=ScriptedLLM(plan_follower(plans_of(spec))), encoder=minilm()).play()
        keys = [(e.round, e.task_id) for e in store.episodes("victim")]
        assert len(keys) == len(set(keys)) == 2 * 4
        assert store.run("victim").status == "finished"


@pytest.mark.parametrize(("signum", "status", "said"), [(signal.SIGINT, 130, "interrupted"),
                                                        (signal.SIGTERM, 143, "interrupted by SIGTERM")])
def test_ctrl_c_or_sigterm_stops_a_ray_run_within_seconds_leaving_it_interrupted(tmp_path, ray_cluster, signum, status, said):
    # SIGTERM before: ray.init's own handler ended the driver at once (exit 15), the run left `running`.
    spec = write_spec(tmp_path, "stop", ["throw_away_trash", "collect_toys"], per_task=2)
    db = tmp_path / "s.db"
    # Held after two stored episodes: the other two are under way in the workers, held in their LLM calls.
    command = held_ray_run(tmp_path, spec, db, 2, rounds=1, cluster=ray_cluster)
    err = tmp_path / "err.txt"
    with err.open("w") as stderr:
        process = start(command, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=stderr)
        assert signal_when_stored(process, db, 2, signum, timeout=30) == status, err.read_text()
    assert f"{said}: finished episodes are stored" in err.read_text() and "Traceback" not in err.read_text()
    with Store(db) as store:
        assert store.run("victim").status == "interrupted"
        assert 2 <= len(list(store.episodes("victim"))) < 4  # the held ones never stored


def test_ray_episodes_spread_over_two_servers_each_on_one(tmp_path, ray_cluster, fake_openai):
    other = FakeOpenAI()
    try:
        spec = write_spec(tmp_path, "spread", ["throw_away_trash", "collect_toys"], per_task=2, max_steps=2)
        run_config = RunConfig(ExperimentConfig(spec=spec, rounds=1, llm="openai:m"), RetrievalConfig(mode="none", k=0, corrections=False),
                               execution=ExecutionConfig(workers=2, executor="ray", llm_urls=(fake_openai.url, other.url)))
        with Store(tmp_path / "s.db") as store:
            Runner(store, start_run(store, run_config), run_config, encoder=minilm()).play()
            assert len(list(store.episodes())) == 4
        by_server = []
        for server in (fake_openai, other):
            by_server.append({next(m["content"] for m in body["messages"] if m["content"].startswith("Your goal")).split("\n")[0]
                              for _, body in server.requests})
        assert by_server[0] and by_server[1] and not by_server[0] & by_server[1]
        assert len(by_server[0] | by_server[1]) == 4
    finally:
        other.close()
