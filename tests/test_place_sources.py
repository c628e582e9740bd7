"""Where things are, three switchable sources of the find-X order (prag.agent.world.places): the store's
semantic memory (a hand-made store, under the progressive rule), the LLM's guess (a scripted
stand-in LLM, named as such: asked once per kind and only where the memory knows nothing, under a
grammar of the room's kinds parsed by llama.cpp, its malformed replies dropped, its answers kept
in the store's answer cache) and the family's placement rules, each alone and together; the
option, its refusals and its round trip. The agent plays a generated game on the real ALFWorld
engine."""
from __future__ import annotations

from pathlib import Path

import pytest
from support import placed_episode, play_until_won, run

from prag.agent.agent import PragAgent
from prag.agent.config import AgentConfig
from prag.agent.protocol import Usage
from prag.agent.skills.explore import search_order
from prag.agent.world.observed import Observed
from prag.agent.world.places import LLMPlaces, Places, Ranking, parse_places, places_grammar
from prag.envs.alfworld.env import AlfworldEnv
from prag.envs.alfworld.gen import DIFFICULTIES, generate_game
from prag.envs.base import Observation, Task
from prag.envs.domain import ALFWORLD
from prag.errors import PragError
from prag.llm.scripted import ScriptedLLM
from prag.retrieval.index import Visibility
from prag.run.agents import semantic_memory
from prag.run.config import ExperimentConfig, RunConfig
from prag.store import Store
from prag.store.answers import cached

ROOM = ["drawer 1", "cabinet 1", "fridge 1", "garbagecan 1", "countertop 1"]
KINDS = ["cabinet", "countertop", "drawer", "fridge", "garbagecan"]  # as the LLM is shown them: sorted


def room(goal: str = "put some apple in garbagecan.") -> Observed:
    """A hand-made ALFWorld room at its start: every place listed, none searched."""
    admissible = [f"go to {place}" for place in ROOM]
    return Observed.start(Observation(goal, "You are in the middle of a room.", admissible, [], ""), ALFWORLD)


def memory_of(table: dict[str, list[tuple[str, int]]]) -> Ranking:
    return lambda kind: table.get(kind, [])


def guesser(reply: str, *, enforced: bool = False) -> tuple[LLMPlaces, ScriptedLLM]:
    """The LLM source with a scripted stand-in answering `reply` to every question."""
    llm = ScriptedLLM(lambda messages: reply, supports_choices=enforced)
    return LLMPlaces(llm, Usage()), llm


def asked_for(llm: ScriptedLLM) -> list[str]:
    """The kinds of thing the stand-in was asked about, in order."""
    return [call["messages"][-1]["content"].split("Thing: ")[1].split("\n")[0] for call in llm.calls]


# --- each source alone ----------------------------------------------------------------------------


def test_no_source_searches_the_places_as_listed():
    assert search_order(["apple"], room(), Places(ALFWORLD, ())) == ROOM


def test_the_rules_alone_search_where_the_world_may_put_the_thing_cheapest_look_first():
    # An apple is on a countertop or in a garbage can (seen on arrival), in a fridge (opened
    # first), never in a cabinet or a drawer.
    assert search_order(["apple"], room(), Places(ALFWORLD, ("rules",))) == [
        "garbagecan 1", "countertop 1", "fridge 1", "drawer 1", "cabinet 1"]
    # A kind the table does not name: as listed.
    assert search_order(["unicorn"], room(), Places(ALFWORLD, ("rules",))) == ROOM


def test_the_memory_alone_follows_a_hand_made_store_and_sees_only_earlier_rounds(tmp_path):
    with Store(tmp_path / "s.db") as store:
        store.add_run(run("r1"))
        store.add_episode(placed_episode([[("apple 1", "in", "cabinet 1")]], round_=0, task_id="a"))
        store.add_episode(placed_episode([[("apple 2", "in", "cabinet 2")], [("apple 1", "in", "fridge 1")]],
                                         round_=0, task_id="b"))
        store.add_episode(placed_episode([[("apple 1", "in", "drawer 1")]], round_=1, task_id="c"))
        memory = {r: semantic_memory(store, Visibility("r1", r)) for r in (0, 1, 2)}
        order = {r: search_order(["apple"], room(), Places(ALFWORLD, ("memory",), memory[r])) for r in memory}
        with_rules = search_order(["apple"], room(), Places(ALFWORLD, ("memory", "rules"), memory[0]))
    assert order[0] == ROOM  # round 0 of an empty store sees nothing: as listed
    assert with_rules == search_order(["apple"], room(), Places(ALFWORLD, ("rules",)))  # and the rules alone decide
    # Round 1 sees round 0: cabinets in two episodes, fridges in one; no rules, so the rest as listed.
    assert order[1] == ["cabinet 1", "fridge 1", "drawer 1", "garbagecan 1", "countertop 1"]
    assert order[2][:3] == ["cabinet 1", "drawer 1", "fridge 1"]  # round 1's drawer now counts (ties by name)


def test_the_llm_alone_searches_the_kinds_it_names_first_then_as_listed():
    guess, llm = guesser("countertop, drawer")
    assert search_order(["apple"], room(), Places(ALFWORLD, ("llm",), guess=guess)) == [
        "countertop 1", "drawer 1", "cabinet 1", "fridge 1", "garbagecan 1"]
    assert asked_for(llm) == ["apple"] and guess.usage.cost.calls == 1  # counted as the episode's LLM call
    shown = llm.calls[0]["messages"][-1]["content"]
    assert "Places in this room: cabinet, countertop, drawer, fridge, garbagecan." in shown


# --- together: precedence and when the LLM is asked ---------------------------------------------------


def test_memory_then_the_llm_then_the_rules():
    guess, llm = guesser("drawer")
    places = Places(ALFWORLD, ("memory", "llm", "rules"), memory_of({"apple": [("cabinet", 1)]}), guess)
    # The memory knows apples: the LLM is not asked; the rules order what the memory left.
    assert search_order(["apple"], room(), places) == ["cabinet 1", "garbagecan 1", "countertop 1", "fridge 1", "drawer 1"]
    assert llm.calls == []
    # It knows no newspaper: the LLM's drawer first, then the rules (a newspaper may be in a
    # garbage can or on a countertop, in a cabinet behind a door, never in a fridge).
    assert search_order(["newspaper"], room(), places) == ["drawer 1", "garbagecan 1", "countertop 1", "cabinet 1",
                                                           "fridge 1"]
    assert asked_for(llm) == ["newspaper"]


def test_the_llm_is_asked_once_per_kind_and_only_for_kinds_the_memory_does_not_know():
    guess, llm = guesser("fridge")
    places = Places(ALFWORLD, ("memory", "llm"), memory_of({"apple": [("countertop", 3)]}), guess)
    observed = room()
    for _ in range(5):  # find-X orders the places again every step
        search_order(["apple", "mug"], observed, places)
    observed.update("go to fridge 1", Observation("", "You arrive at fridge 1.", [f"go to {p}" for p in ROOM], [], "",
                                                  location="fridge 1"))
    assert search_order(["apple", "mug"], observed, places)[:1] == ["countertop 1"]
    assert asked_for(llm) == ["mug"]
    # With the memory switched off, the LLM is asked for apples too: nothing is known of them then.
    guess, llm = guesser("fridge")
    search_order(["apple"], room(), Places(ALFWORLD, ("llm",), memory_of({"apple": [("countertop", 3)]}), guess))
    assert asked_for(llm) == ["apple"]


def test_the_llm_answers_under_a_grammar_of_the_rooms_kinds_of_place(accepts):
    guess, llm = guesser("fridge, countertop", enforced=True)
    search_order(["apple"], room(), Places(ALFWORLD, ("llm",), guess=guess))
    grammar = llm.calls[0]["grammar"]
    assert grammar == places_grammar(KINDS)
    assert accepts(grammar, "fridge, countertop, garbagecan") and accepts(grammar, "drawer")
    assert not accepts(grammar, "sofa")  # not in this room
    assert not accepts(grammar, "fridge, countertop, drawer, cabinet")  # at most three
    assert not accepts(grammar, "the fridge")
    # A backend that does not enforce grammars is sent none (its answer is read as words all the same).
    unenforced, plain = guesser("fridge")
    search_order(["apple"], room(), Places(ALFWORLD, ("llm",), guess=unenforced))
    assert plain.calls[0]["grammar"] is None


@pytest.mark.parametrize(("reply", "read"), [
    ("", []),
    ("The apple is probably in the fridge!", []),
    ("__import__('os').system('touch pwned')", []),
    ("[\"fridge\"]", []),
    ("toaster, Fridge, fridge, cabinet., drawer, garbagecan", ["fridge", "cabinet", "drawer"]),
])
def test_a_malformed_reply_is_read_as_words_and_falls_back_to_the_next_source(tmp_path, monkeypatch, reply, read):
    monkeypatch.chdir(tmp_path)
    guess, llm = guesser(reply)
    places = Places(ALFWORLD, ("llm", "rules"), guess=guess)
    order = search_order(["apple"], room(), places)
    assert guess.ranked("apple", KINDS) == read and len(llm.calls) == 1  # never asked again, even for nothing
    rules = search_order(["apple"], room(), Places(ALFWORLD, ("rules",)))
    assert order == (rules if not read else ["fridge 1", "cabinet 1", "drawer 1", "garbagecan 1", "countertop 1"])
    assert not (tmp_path / "pwned").exists()


def test_the_answer_is_kept_in_the_stores_answer_cache_for_later_episodes(tmp_path):
    llm = ScriptedLLM(lambda messages: "fridge")
    with Store(tmp_path / "s.db") as store:
        model = cached(llm, store)
        for listed in (ROOM, list(reversed(ROOM))):  # a later episode, the same kinds learnt in another order
            guess = LLMPlaces(model, Usage())
            assert guess.ranked("apple", [ALFWORLD.kind(p) for p in listed]) == ["fridge"]
        assert len(llm.calls) == 1
        assert store.answers.stats()["scripted"]["hits"] == 1


def test_the_llm_source_needs_an_llm_to_ask():
    with pytest.raises(ValueError, match="llm place source"):
        Places(ALFWORLD, ("llm",))


# --- the agent, on a generated game on the real ALFWorld engine ------------------------------------


@pytest.fixture(scope="module")
def hidden(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A generated medium game to cool a thing and put it somewhere; the kind of place the thing
    starts in (read from the planner's plan, which only the test sees)."""
    game = generate_game("pick_cool_then_place_in_recep", 3, tmp_path_factory.mktemp("games"), DIFFICULTIES["medium"])
    env = AlfworldEnv(Task("cool", "pick_cool_then_place_in_recep", 0, str(game)), game)
    try:
        env.reset()
        take = next(step for step in env.oracle_plan() if step.startswith("take "))
    finally:
        env.close()
    return game, ALFWORLD.kind(take.split(" from ")[1])


def play(game: Path, llm: ScriptedLLM, places: tuple[str, ...], memory: Ranking) -> tuple[bool, PragAgent]:
    agent = PragAgent(llm, None, Visibility(), AgentConfig(ask="hard-coded", sources=("search", "llm"), places=places),
                      domain=ALFWORLD, ranking=memory)
    won = play_until_won(AlfworldEnv(Task("cool", "pick_cool_then_place_in_recep", 0, str(game)), game), agent, 40)
    return won, agent


def test_the_agent_asks_the_llm_where_the_thing_is_once_and_goes_there_first(hidden):
    game, kind = hidden

    def answer(messages: list) -> str:
        assert "Most likely places:" in messages[-1]["content"], "search plays this game: no step is asked"
        return kind

    llm = ScriptedLLM(answer)
    won, agent = play(game, llm, ("llm",), memory_of({}))
    assert won and len(llm.calls) == 1 and agent.llm_step.usage.cost.calls == 1
    assert agent.state.observed.actions[0].startswith(f"go to {kind} ")
    # The memory knows where such things are: the LLM is never called.
    silent = ScriptedLLM([])
    won, agent = play(game, silent, ("memory", "llm"), lambda asked: [(kind, 2)])
    assert won and silent.calls == [] and agent.llm_step.usage.cost.calls == 0


# --- the option -------------------------------------------------------------------------------------


def test_the_option_is_read_in_precedence_order_and_unknown_names_are_refused():
    assert AgentConfig().places == ("memory", "rules")  # as prag searched before the option
    assert parse_places(" rules, llm ,memory,rules") == ("memory", "llm", "rules")
    assert parse_places("") == ()
    with pytest.raises(PragError, match=r"--places 'rules,oracle': oracle is no source of where things are; "
                                        r"name some of memory, llm, rules"):
        parse_places("rules,oracle")
    with pytest.raises(PragError, match="--places"):
        RunConfig(ExperimentConfig("x"), agent=AgentConfig(places=("map",))).check()


def test_a_run_recorded_before_the_option_reads_back_as_it_searched():
    # The round trip of every setting is tests/test_run_config.py's; a config without the key
    # was written by a prag that searched by the memory and the rules, the default.
    older = RunConfig(ExperimentConfig("x"), agent=AgentConfig(places=("llm",))).to_dict()
    del older["agent"]["places"]
    assert RunConfig.from_dict(older).agent.places == ("memory", "rules")
