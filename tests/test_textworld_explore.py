"""Exploration where moves are relative (TextWorld): the map of rooms built from what was observed,
and find-X over exits not yet taken and containers not yet opened, on hand-made observations and on
a game with doors made by TextWorld's GameMaker, compiled and played on the real engine."""
from __future__ import annotations

from pathlib import Path

import pytest
from textworld import GameMaker, GameOptions
from textworld.generator import compile_game

from prag.agent.agent import PragAgent
from prag.agent.config import AgentConfig
from prag.agent.skills.explore import seek_plan
from prag.agent.world.observed import Observed
from prag.agent.world.roommap import RoomMap
from prag.envs.base import Observation, Task
from prag.envs.domain import TEXTWORLD
from prag.envs.textworld.env import TextworldEnv
from prag.envs.textworld.games import quiet_jericho
from prag.errors import LLMError
from prag.llm.scripted import ScriptedLLM
from prag.retrieval.index import Visibility
from prag.run.episode import play_episode
from prag.store.episode_extra import SubGoal


def test_the_map_records_an_exit_taken_both_ways_and_finds_the_way_back() -> None:
    rooms = RoomMap(TEXTWORLD)
    rooms.read("bedroom", [("exit", "south of", "bedroom"), ("wooden door", "east of", "bedroom"), ("bed", "at", "bedroom")],
               ["go south", "open wooden door"])
    assert rooms.exits["bedroom"] == {"south": "exit", "east": "wooden door"} and rooms.where == {"bed": "bedroom"}
    assert rooms.unexplored("bedroom") == ["south", "east"]
    rooms.moved("bedroom", "east", "corridor")
    rooms.read("corridor", [("wooden door", "west of", "corridor"), ("exit", "north of", "corridor")], ["go west"])
    rooms.moved("corridor", "north", "study")
    rooms.read("study", [("exit", "south of", "study"), ("key", "in", "inventory")], ["go south"])
    assert rooms.leads == {"bedroom": {"east": "corridor"}, "corridor": {"west": "bedroom", "north": "study"},
                           "study": {"south": "corridor"}}
    assert rooms.unexplored("bedroom") == ["south"] and rooms.unexplored("corridor") == [] and "key" not in rooms.where
    assert rooms.path("study", lambda room: room == "bedroom") == [("study", "south"), ("corridor", "west")]
    assert rooms.path("study", lambda room: bool(rooms.unexplored(room))) == [("study", "south"), ("corridor", "west")]
    assert rooms.path("study", lambda room: room == "study") == []
    assert rooms.path("study", lambda room: room == "attic") is None


def seen(location: str, triples: list[tuple[str, str, str]], admissible: list[str]) -> Observation:
    return Observation("", f"-= {location.title()} =-", admissible, triples, "", location=location)


def test_a_move_of_the_route_taken_elsewhere_walks_back_to_the_route_through_the_door_it_opened() -> None:
    observed = Observed.start(seen("garage", [("gate", "south of", "garage"), ("gate", "is", "closed"),
                                              ("exit", "west of", "garage")], ["go west", "open gate"]), TEXTWORLD)
    observed.update("go west", seen("shed", [("exit", "east of", "shed")], ["go east"]))
    plan = seek_plan("go south", "garage", observed)
    assert plan is not None and plan.steps == ("go east",) and plan.source == "find"
    observed.update("go east", seen("garage", [("gate", "south of", "garage"), ("gate", "is", "closed"),
                                               ("exit", "west of", "garage")], ["go west", "open gate"]))
    assert seek_plan("go south", "garage", observed) is None  # on the route: the sub-goals ready the move


def test_a_locked_door_nothing_here_unlocks_is_no_exit_to_explore() -> None:
    locked = [("chest", "at", "cellar"), ("chest", "is", "locked"), ("iron door", "north of", "cellar"),
              ("iron door", "is", "locked"), ("exit", "east of", "cellar")]
    observed = Observed.start(seen("cellar", locked, ["go east", "examine chest"]), TEXTWORLD)
    plan = seek_plan("take coin", None, observed)
    assert plan is not None and plan.steps == ("go east",)
    observed.update("go east", seen("pantry", [("exit", "west of", "pantry")], ["go west"]))
    assert seek_plan("take coin", None, observed) is None  # every exit taken, nothing else can be opened


def doors_game(path: Path) -> Path:
    """Five rooms: the bedroom (start) with a doorless exit south to a bathroom and a closed wooden
    door east to a corridor; from the corridor a study north (a closed box holding a sock) and,
    behind a closed iron gate east, the kitchen, whose closed chest holds the teaspoon. The
    objective names the teaspoon only."""
    maker = GameMaker()
    bedroom, bathroom, corridor = maker.new_room("bedroom"), maker.new_room("bathroom"), maker.new_room("corridor")
    study, kitchen = maker.new_room("study"), maker.new_room("kitchen")
    maker.connect(bedroom.south, bathroom.north)
    maker.connect(corridor.north, study.south)
    for (one, other), name in [((bedroom.east, corridor.west), "wooden door"), ((corridor.east, kitchen.west), "iron gate")]:
        maker.add_fact("closed", maker.new_door(maker.connect(one, other), name=name))
    for room, container, thing in [(study, "box", "sock"), (kitchen, "chest", "teaspoon")]:
        holder = maker.new(type="c", name=container)
        maker.add_fact("closed", holder)
        room.add(holder)
        holder.add(maker.new(type="o", name=thing))
    maker.set_player(bedroom)
    with quiet_jericho():  # the maker plays the commands to record the quest
        maker.set_quest_from_commands(
            ["open wooden door", "go east", "open iron gate", "go east", "open chest", "take teaspoon from chest"])
    game = maker.build()
    game.objective = "Pick up the teaspoon."
    options = GameOptions()
    options.path, options.force_recompile = str(path / "doors.z8"), True
    return Path(compile_game(game, options))


@pytest.fixture(scope="module")
def doors(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return doors_game(tmp_path_factory.mktemp("doors"))


def refuse(messages: list) -> str:
    raise LLMError("the LLM was called: exploration by the map should have chosen every step")


def test_exploring_by_the_map_wins_a_game_with_doors_whose_objective_names_only_the_thing(doors: Path) -> None:
    env = TextworldEnv(Task("doors", "custom", 0, str(doors)), doors)
    config = AgentConfig(ask="hard-coded", sources=("experience", "search", "llm"))
    agent = PragAgent(ScriptedLLM(refuse), None, Visibility(), config, domain=TEXTWORLD)
    try:
        steps, won, trace = play_episode(env, agent)
    finally:
        env.close()
    assert won and trace.usage.cost.calls == 0
    assert trace.report.subgoals == [SubGoal("take teaspoon", 11, "taken")]
    # The bathroom is a dead end: back by the map; doors opened on the way; the study's box opened
    # and left; back to the corridor for the gate; the chest opened; the teaspoon taken.
    assert [s.action for s in steps[1:]] == [
        "go south", "go north", "open wooden door", "go east", "go north", "open box", "go south",
        "open iron gate", "go east", "open chest", "take teaspoon from chest",
    ]
    assert [d.source for d in trace.report.decisions] == ["find"] * 10 + ["subgoal"]
