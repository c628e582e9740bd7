"""The wrappers a spec opens its environments with, on the real grid engine: the step limit ends
an episode at the cap without a win, the action filter hides the spec's prefixes, and
`TaskSetSpec.open(max_steps)` overrides the spec's cap."""
from __future__ import annotations

from pathlib import Path

from prag.envs.base import Environment
from prag.envs.spec import load_spec
from prag.envs.wrappers import ActionFilter, StepLimit


def grid_spec(tmp_path: Path, max_steps: int, hide: list[str]) -> str:
    path = tmp_path / "grid.toml"
    path.write_text(
        f'env = "grid"\nmax_steps = {max_steps}\nhide_actions = {hide}\n'.replace("'", '"')
        + '[params]\ntasks = ["throw_away_trash"]\nper_task = 1\n'
    )
    return str(path)


def test_the_spec_cap_ends_the_episode_and_a_reset_starts_counting_again(tmp_path):
    source = load_spec(grid_spec(tmp_path, 2, [])).open()
    env = source.make(source.tasks()[0])
    assert isinstance(env, Environment)
    try:
        first = env.reset()
        plan = env.oracle_plan()
        assert len(plan) > 2 and first.admissible
        assert not env.step(plan[0]).done
        capped = env.step(plan[1])
        assert capped.done and not capped.won
        env.reset()
        assert not env.step(plan[0]).done
    finally:
        env.close()


def test_open_overrides_the_cap_and_the_plan_then_wins(tmp_path):
    spec = load_spec(grid_spec(tmp_path, 2, []))
    source = spec.open(max_steps=100)
    env = source.make(source.tasks()[0])
    try:
        env.reset()
        played = [env.step(action) for action in env.oracle_plan()]
        assert played[-1].won and not any(o.done for o in played[:-1])
    finally:
        env.close()


def test_the_action_filter_hides_the_specs_prefixes_and_keeps_all_when_all_would_go(tmp_path):
    spec = load_spec(grid_spec(tmp_path, 50, ["go to door"]))
    bare = spec.open().source  # the family's own source, unwrapped
    task = bare.tasks()[0]
    every = bare.make(task).reset().admissible
    assert any(a.startswith("go to door") for a in every)
    env = spec.open().make(task)
    try:
        shown = env.reset().admissible
        assert shown == [a for a in every if not a.startswith("go to door")]
        assert not any(a.startswith("go to door") for a in env.step(env.oracle_plan()[0]).admissible)
    finally:
        env.close()
    everything = ActionFilter(StepLimit(bare.make(task), 5), ("",))  # every action starts with ""
    try:
        assert everything.reset().admissible == every
    finally:
        everything.close()
