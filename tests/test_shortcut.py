"""The agent's own success at a task, replayed without its detours: episodes played in the real
engines (generated medium ALFWorld games, the grid world) with their detours, shortened, and the
shortened plan replayed from the start in the same engine. The LLM is a stand-in that fails if
it is ever called: search alone plays these episodes."""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from prag.agent.agent import PragAgent
from prag.agent.config import AgentConfig
from prag.agent.sources.past_episodes import ThisTask, candidates
from prag.agent.sources.shortcut import recall, shortcut, without_detours
from prag.envs.alfworld.env import AlfworldEnv
from prag.envs.alfworld.gen import DIFFICULTIES, generate_game
from prag.envs.base import Environment, Observation, Task
from prag.envs.domain import ALFWORLD, GRID, TEXTWORLD, Domain
from prag.envs.grid.env import GridEnv
from prag.llm.scripted import ScriptedLLM
from prag.retrieval.episodes import Experience
from prag.retrieval.index import Hit, Visibility
from prag.store import EpisodeRecord, StepRecord


def record(env: Environment, actions: Sequence[str]) -> EpisodeRecord:
    """The episode of playing `actions` from a reset, as the store keeps it."""
    observation = env.reset()
    steps = [StepRecord.of(0, None, observation)]
    for action in actions:
        assert action in observation.admissible, action
        observation = env.step(action)
        steps.append(StepRecord.of(len(steps), action, observation))
    return EpisodeRecord("r", 0, env.task.task_id, env.task.task_type, observation.goal, observation.won, steps, id=1)


def searched_episode(env: Environment, domain: Domain) -> EpisodeRecord:
    """A round-0 episode: the find-X skill explores until the goal's things are seen, then
    means-ends search plays to the win. Never the LLM."""
    config = AgentConfig(ask="hard-coded", sources=("experience", "search", "llm"))
    agent = PragAgent(ScriptedLLM([]), None, Visibility(), config, domain=domain)  # any call would fail
    observation = env.reset()
    agent.reset(observation)
    actions = []
    while not observation.won and len(actions) < 60:
        action = agent.act(observation).action
        observation = env.step(action)
        agent.observe(action, observation)
        actions.append(action)
    return record(env, actions)


def wins(env: Environment, plan: Sequence[str]) -> bool:
    """Whether `plan`, every step admissible when its turn comes, wins from a reset."""
    observation = env.reset()
    for action in plan:
        if observation.won or action not in observation.admissible:
            break
        observation = env.step(action)
    return observation.won


def actions_of(episode: EpisodeRecord) -> list[str]:
    return [step.action for step in episode.steps if step.action is not None]


@pytest.fixture(scope="module")
def games(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("games")


def alfworld(games: Path, task_type: str, seed: int) -> AlfworldEnv:
    game = generate_game(task_type, seed, games, DIFFICULTIES["medium"])
    return AlfworldEnv(Task(game.parent.name, task_type, seed, str(game)), game)


# --- ALFWorld --------------------------------------------------------------------------------------


def explored(games: Path, task_type: str) -> tuple[AlfworldEnv, EpisodeRecord]:
    """A generated game whose search-played episode won after opening places and walking past
    others (a detour to cut), with its environment."""
    for seed in range(3, 40):
        env = alfworld(games, task_type, seed)
        episode = searched_episode(env, ALFWORLD)
        played = actions_of(episode)
        if episode.won and any(a.startswith("open ") for a in played) and len(played) > env.shortest_path_length + 2:
            return env, episode
        env.close()
    pytest.fail(f"no generated {task_type} game took a detour")


@pytest.mark.parametrize("task_type", ["pick_cool_then_place_in_recep", "pick_clean_then_place_in_recep"])
def test_an_explored_success_is_shortened_and_still_wins_a_generated_game(games: Path, task_type: str) -> None:
    env, episode = explored(games, task_type)
    try:
        played = actions_of(episode)
        plan = shortcut(episode, ALFWORLD)
        # The room as the episode found it: the search walks straight to the thing and treats it.
        assert len(plan) == env.shortest_path_length < len(played)
        assert wins(env, plan)
        # The replay without detours, search's fallback, is shorter too and wins as well: the
        # places passed by and the opens of places nothing was taken from are gone, and what the
        # win needs (the open before putting into the closed target, the treatment) is kept.
        replay = without_detours(episode, ALFWORLD, {})
        assert len(plan) <= len(replay) < len(played) and wins(env, replay)
        acts = ("take ", "move ", "cool ", "clean ")
        assert [a for a in replay if a.startswith(acts)] == [a for a in played if a.startswith(acts)]
        into = {a.rsplit(" to ", 1)[1] for a in played if a.startswith("move ")}
        assert [a for a in played if a.startswith("open ") and a.removeprefix("open ") in into] == [
            a for a in replay if a.startswith("open ") and a.removeprefix("open ") in into
        ]
        # As a plan from experience, it is the agent's own success at this very task.
        hit = Hit(1, 2.0, 1.0, 1.0, 0)
        this = ThisTask.of(episode.goal, episode.steps[0], ALFWORLD)
        (offered,) = candidates(this, [Experience(hit, episode)], [])
        assert (offered.rank, offered.length, offered.plan.steps, offered.plan.source) == (1, len(plan), plan, "episode")
        # Played in another room or for another goal, its steps are offered only where search is
        # no source to serve the task.
        elsewhere = replace(this, start=("another room", this.start[1]))
        assert [c.rank for c in candidates(elsewhere, [Experience(hit, episode)], [])] == [3]
        assert candidates(elsewhere, [Experience(hit, episode)], [], only_this_task=True) == []
        other_goal = "put a apple in fridge" if "apple" not in episode.goal else "put a egg in fridge"
        assert candidates(replace(this, goal=other_goal), [Experience(hit, episode)], [], only_this_task=True) == []
        (same,) = candidates(this, [Experience(hit, episode)], [], only_this_task=True)
        assert same.rank == 1
    finally:
        env.close()


def test_both_objects_of_a_two_object_task_are_kept(games: Path) -> None:
    env = alfworld(games, "pick_two_obj_and_place", 3)
    try:
        episode = searched_episode(env, ALFWORLD)
        plan = shortcut(episode, ALFWORLD)
        assert len(plan) <= len(actions_of(episode)) and wins(env, plan)
        put = [re.fullmatch(r"move (.+) to .+", a) for a in plan]
        assert len({match[1] for match in put if match}) == 2  # two things of the kind, each put
    finally:
        env.close()


def test_a_shortest_success_is_unchanged(games: Path) -> None:
    env = alfworld(games, "pick_heat_then_place_in_recep", 3)
    try:
        env.reset()
        oracle = env.oracle_plan()
        episode = record(env, oracle)
        assert episode.won
        assert shortcut(episode, ALFWORLD) == tuple(oracle)
        assert without_detours(episode, ALFWORLD, {}) == tuple(oracle)
    finally:
        env.close()


def test_the_room_is_recalled_as_the_episode_found_it(games: Path) -> None:
    """Each thing where and as it was first seen: the heated mug was not hot at the start, and the
    places the episode opened were closed."""
    env, episode = explored(games, "pick_heat_then_place_in_recep")
    try:
        start = recall(episode, ALFWORLD)
        played = actions_of(episode)
        taken = next(a for a in played if a.startswith("take "))
        thing, place = re.fullmatch(r"take (.+) from (.+)", taken).groups()  # type: ignore[union-attr]
        assert start.seen[thing] == place and "hot" not in start.states[thing]
        assert start.location == episode.steps[0].location and not start.held
        opened = {a.removeprefix("open ") for a in played if a.startswith("open ")}
        assert opened and opened <= start.closed and not opened & start.opened
        assert {a.removeprefix("go to ") for a in played if a.startswith("go to ")} <= set(start.places)
    finally:
        env.close()


# --- the grid world --------------------------------------------------------------------------------


def grid(task: str, seed: int) -> GridEnv:
    return GridEnv(Task(f"{task}-{seed}", task, seed))


@pytest.mark.parametrize(("task", "seed"), [("throw_away_trash", 0), ("wash_dishes", 1)])
def test_an_explored_grid_success_is_shortened_and_still_wins(task: str, seed: int) -> None:
    env = grid(task, seed)
    try:
        episode = searched_episode(env, GRID)
        played = actions_of(episode)
        plan = shortcut(episode, GRID)
        assert episode.won and len(plan) < len(played) and wins(env, plan)
        # Doors are opened on the way where the plan passes through them.
        assert any(re.fullmatch(r"open door \d+", a) for a in plan)
    finally:
        env.close()


def furniture(observation: Observation) -> set[str]:
    """The furniture of the room the agent is in, as its scene graph lists it."""
    return {s for s, relation, _ in observation.scene_triples if relation == GRID.in_view and s != "agent"} - {
        s for s in [s for s, _, _ in observation.scene_triples] if re.fullmatch(str(GRID.passage), s)
    }


def with_a_detour(env: GridEnv, oracle: list[str]) -> list[str]:
    """The oracle plan with a visit, before a move to furniture, to furniture of the agent's room
    that the plan never uses."""
    named = {entity for action in oracle for entity in GRID.entities(action)}
    observation = env.reset()
    for n, action in enumerate(oracle):
        if GRID.movement(action) in furniture(observation):
            detour = [f"go to {f}" for f in sorted(furniture(observation) - named) if f"go to {f}" in observation.admissible]
            if detour:
                return [*oracle[:n], detour[0], *oracle[n:]]
        observation = env.step(action)
    raise AssertionError("no move to furniture with other furniture in the room")


@pytest.mark.parametrize(("task", "seed"), [("throw_away_trash", 0), ("collect_toys", 1)])
def test_on_the_grid_a_place_passed_by_is_dropped_and_doors_stay(task: str, seed: int) -> None:
    env = grid(task, seed)
    try:
        env.reset()
        oracle = env.oracle_plan()
        detoured = with_a_detour(env, oracle)
        episode = record(env, detoured)
        assert episode.won and len(detoured) == len(oracle) + 1
        replay = without_detours(episode, GRID, recall(episode, GRID).room_of)
        assert replay == tuple(oracle) and wins(env, replay)
        # Doors opened on the way are kept, as the opens of what things were put in.
        assert [a for a in replay if a.startswith("open ")] == [a for a in oracle if a.startswith("open ")]
        assert shortcut(episode, GRID) == tuple(oracle)
    finally:
        env.close()


def test_moves_naming_directions_are_never_dropped() -> None:
    """TextWorld's moves lead where the room they are taken in leads: none is passed by."""
    steps = [StepRecord(0, None, "", "", "kitchen")]
    for t, (action, at) in enumerate([("go north", "hall"), ("go east", "study"), ("take key", "study")], start=1):
        steps.append(StepRecord(t, action, "", "", at))
    episode = EpisodeRecord("r", 0, "t", "tw", "find the key", True, steps)
    assert shortcut(episode, TEXTWORLD) == ("go north", "go east", "take key")
