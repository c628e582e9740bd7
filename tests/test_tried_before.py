"""What a later round takes from this very task's earlier episodes: past the LLM budget, a random
draw does not take again what a lost episode took from the same observation and scene graph; and
an episode is of this very task by its goal and its start, the things by their own names."""
from __future__ import annotations

from collections import Counter

from prag.agent.agent import PragAgent
from prag.agent.config import AgentConfig
from prag.agent.sources.past_episodes import ThisTask, tried_before
from prag.agent.world.state import Lessons
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


def episode(goal: str, won: bool, actions: list[str], room: str = "hallway") -> EpisodeRecord:
    steps = [StepRecord(0, None, HALL, f"at: {room}", room, [], 0.0)]
    steps += [StepRecord(t, action, HALL, SCENE, "hallway", [], 0.0) for t, action in enumerate(actions, start=1)]
    return EpisodeRecord("r", 0, "find-0", "find", goal, won, steps, id=len(actions))


def test_only_this_tasks_lost_episodes_count() -> None:
    lost = episode(GOAL, False, ["open door to kitchen", "look around"])
    this = ThisTask.of(GOAL, lost.steps[0], SCIWORLD)
    counted = tried_before(this, [Experience(None, lost)])  # type: ignore[arg-type]
    assert counted == {(HALL, SCENE, "open door to kitchen"): 1, (HALL, SCENE, "look around"): 1}
    others = [episode(GOAL, True, ["open door to bedroom"]),  # a win is replayed, not avoided
              episode("Your task is to find a(n) animal.", False, ["open door to bedroom"]),
              episode(GOAL, False, ["open door to bedroom"], room="kitchen")]
    assert not tried_before(this, [Experience(None, e) for e in others])  # type: ignore[arg-type]


def agent(budget: int, seed: int) -> PragAgent:
    # Records the choices it is offered; reads the goal as no facts (a goal of one sentence is read:
    # prag.agent.goals.fact_reader), then answers the step.
    llm = ScriptedLLM(lambda messages: "none" if "Instruction:" in messages[-1]["content"] else "open door to kitchen",
                      supports_choices=True)
    made = PragAgent(llm, None, Visibility(), AgentConfig(think=False, llm_budget=budget), domain=SCIWORLD, seed=seed)
    made.reset(hallway())
    return made


def test_a_random_draw_avoids_what_an_earlier_round_took_from_here_but_the_llm_may_take_it() -> None:
    taken = ["open door to kitchen", "open door to bedroom", "look around"]
    drawn = set()
    for seed in range(30):
        played = agent(0, seed)
        played.state.lessons = Lessons(tried_before=Counter((HALL, SCENE, action) for action in taken))
        drawn.add(played.act(hallway()).action)
    assert drawn == {"pick up orange"}
    # With every action tried before, the draw is among those tried least.
    played = agent(0, 0)
    played.state.lessons = Lessons(tried_before=Counter((HALL, SCENE, action) for action in ACTIONS + taken[:1]))
    assert played.act(hallway()).action != "open door to kitchen"
    asked = agent(6, 0)
    asked.state.lessons = Lessons(tried_before=Counter((HALL, SCENE, action) for action in taken))
    assert asked.act(hallway()).action == "open door to kitchen"


def test_a_task_is_known_by_its_things_own_names_whatever_the_actions_called_them_in_that_load() -> None:
    """Two loads of one mendelian-genetics variation (run c-local-q): the art studio's cups of paint,
    named otherwise by the simulator's actions each time. As text the first scenes differ, and the
    won round was not replayed nor the failed box ruled out."""
    cup = "cup containing blue paint in art studio"
    one = [("blue paint in cup", "in", cup), ("blue paint in cup", "is", "liquid")]
    other = [("paint on cup containing blue paint", "in", cup), ("paint on cup containing blue paint", "is", "liquid"),
             ("paint on cup containing blue paint", "isa", "blue paint")]
    first = StepRecord(0, None, "This room is called the art studio.", "at: art studio\n...", "art studio", one, 0.0)
    again = StepRecord(0, None, "This room is called the art studio.", "at: art studio\n,,,", "art studio", other, 0.0)
    this = ThisTask.of(GOAL, first, SCIWORLD)
    assert this.played_in(EpisodeRecord("r", 1, "t", "m", GOAL, False, [again]))
    moved = StepRecord(0, None, "", "", "art studio", [("blue paint in cup", "in", "table")], 0.0)
    assert not this.played_in(EpisodeRecord("r", 1, "t", "m", GOAL, False, [moved]))
