"""The commands a user types most answer at once: `prag stats`, `compare` and `query` import
their own command module, not the runner, the console, PPO's trainer or torch
(benchmarks/cli_latency.py times them on 10k episodes)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from prag.cli import COMMAND_MODULES, _register, app
from prag.retrieval.embed import EmbeddingCache, Encoder
from prag.store import Store
from prag.store.records import EpisodeRecord, RunRecord, StepRecord

HEAVY = ("torch", "sentence_transformers", "transformers", "stable_baselines3", "textworld", "alfworld",
         "matplotlib", "prag.run.runner", "prag.cli.run_cmd", "prag.cli.console_cmd", "prag.cli.asker_cmd")
# What `stats` and `compare` read is the store alone: not the agent (a run's whole config), the
# retrieval and its encoder, or the env families; and they read it with SQL on the connection,
# without sqlite-utils and numpy (which it imports), or the parts of the store they do not use.
STORE_ONLY = ("prag.run.config", "prag.agent.agent", "prag.agent.config", "prag.retrieval.embed", "prag.retrieval.index",
              "prag.envs.registry", "prag.cli.query_cmd", "sqlite_utils", "numpy", "prag.store.corrections",
              "prag.store.ask_policies", "prag.store.action_models")

SCRIPT = """
import sys
from prag.cli import main
sys.argv = ["prag", *{args!r}]
try:
    main()
except SystemExit as end:
    assert not end.code, end.code
print("imported:", *sorted(name for name in {heavy!r} if name in sys.modules))
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "s.db"
    with Store(path) as db:
        db.add_run(RunRecord(id="r", spec="s", llm="random", mode="goal", k=3, rounds=1))
        steps = [StepRecord(0, None, "You are in a kitchen.", "(agent, at, kitchen)")]
        db.add_episode(EpisodeRecord(run_id="r", round=0, task_id="t", task_type="put", goal="put a mug in the fridge",
                                     won=True, steps=steps))
        EmbeddingCache(db, Encoder(quick=True)).vectors(["put a mug in the fridge", "(agent, at, kitchen)"])
    return path


@pytest.mark.parametrize(("command", "heavy"), [(["stats"], HEAVY + STORE_ONLY), (["compare"], HEAVY + STORE_ONLY),
                                               (["query", "--k", "1"], HEAVY)])
def test_the_commands_users_type_most_import_nothing_heavy(store: Path, command: list[str], heavy: tuple[str, ...]) -> None:
    args = [command[0], str(store), *(["put a cup in the fridge"] if command[0] == "query" else []), *command[1:]]
    done = subprocess.run([sys.executable, "-c", SCRIPT.format(args=args, heavy=heavy)], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "imported:"


def test_every_command_is_registered_by_its_module() -> None:
    _register()
    import typer.main

    group = typer.main.get_command(app)
    assert set(group.commands) == set(COMMAND_MODULES)  # type: ignore[attr-defined]
