"""A round goes on otherwise than the last one: past the LLM budget, a random draw does not take
again what a lost episode of this very task took from the same observation and scene graph."""
from __future__ import annotations

from prag.agent.actor import tried_before
from prag.agent.agent import AgentConfig, PragAgent
from prag.envs.base import Observation
from prag.envs.sciworld.domain import SCIWORLD
from prag.llm.scripted import ScriptedLLM
from prag.retrieval.episodes import Experience
from prag.retrieval.index import Visibility
from prag.store.records import EpisodeRecord, StepRecord

GOAL = "Your task is to find a(n) non-living thing."
ACTIONS = ["open door to kitchen", "open door to bedroom", "look around", "pick up orange"]
HALL = "This room is called the hallway."
SCENE = "at: hallway"


def hallway() -> Observation:
    return Observation(GOAL, HALL, list(ACTIONS), [("orange", "in", "hallway")], SCENE, location="hallway",
                       max_steps=100)


def episode(goal: str, won: bool, actions: list[str], first_scene: str = SCENE) -> EpisodeRecord:
    steps = [StepRecord(0, None, HALL, first_scene, "hallway", [], 0.0)]
    steps += [StepRecord(t, action, HALL, SCENE, "hallway", [], 0.0) for t, action in enumerate(actions, start=1)]
    return EpisodeRecord("r", 0, "find-0", "find", goal, won, steps, id=len(actions))


def test_only_this_tasks_lost_episodes_count() -> None:
    lost = episode(GOAL, False, ["open door to kitchen", "look around"])
    counted = tried_before(GOAL, SCENE, [Experience(None, lost)])  # type: ignore[arg-type]
    assert counted == {(HALL, SCENE, "open door to kitchen"): 1, (HALL, SCENE, "look around"): 1}
    others = [episode(GOAL, True, ["open door to bedroom"]),  # a win is replayed, not avoided
              episode("Your task is to find a(n) animal.", False, ["open door to bedroom"]),
              episode(GOAL, False, ["open door to bedroom"], first_scene="at: kitchen")]
    assert not tried_before(GOAL, SCENE, [Experience(None, e) for e in others])  # type: ignore[arg-type]


def agent(budget: int, seed: int) -> PragAgent:
    llm = ScriptedLLM(["open door to kitchen"], supports_choices=True)  # records the choices it is offered
    made = PragAgent(llm, None, Visibility(), AgentConfig(think=False, llm_budget=budget), domain=SCIWORLD, seed=seed)
    made.reset(hallway())
    return made


def test_a_random_draw_avoids_what_an_earlier_round_took_from_here_but_the_llm_may_take_it() -> None:
    taken = ["open door to kitchen", "open door to bedroom", "look around"]
    drawn = set()
    for seed in range(30):
        played = agent(0, seed)
        played.state.tried_before.update((HALL, SCENE, action) for action in taken)
        drawn.add(played.act(hallway()).action)
    assert drawn == {"pick up orange"}
    # With every action tried before, the draw is among those tried least.
    played = agent(0, 0)
    played.state.tried_before.update((HALL, SCENE, action) for action in ACTIONS + taken[:1])
    assert played.act(hallway()).action != "open door to kitchen"
    asked = agent(6, 0)
    asked.state.tried_before.update((HALL, SCENE, action) for action in taken)
    assert asked.act(hallway()).action == "open door to kitchen"
