"""What a thin family written from docs/new_family.md ran into (issue 45), each fixed as a class:
kinds of several words, a scene named in another case than its actions, a move listed through a
door seen closed, find-X by the map without the memory of where things were, and a results card
that spoke of ALFWorld's grammar and wording for every family."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from support import played_rounds

from prag.agent.config import AgentConfig
from prag.agent.plans import resolve
from prag.agent.skills.explore import _through, find_plan
from prag.agent.world.observed import Observed
from prag.agent.world.places import Places
from prag.envs import registry
from prag.envs.base import Observation
from prag.envs.domain import TEXTWORLD
from prag.envs.sam import lift
from prag.llm.scripted import RandomChoiceLLM
from prag.run.card import results_card
from prag.sources import KnowledgeSource
from prag.store import Store
from tests.families import tidy


def test_a_kind_of_several_words_is_the_one_the_family_names() -> None:
    domain = replace(tidy.DOMAIN, kinds=("living room", "TV stand"))
    assert [domain.kind(n) for n in ("living room", "big TV stand", "red apple", "apple 2")] == [
        "living room", "TV stand", "apple", "apple"]
    assert tidy.DOMAIN.kind("living room") == "room"  # without them, the last word, as before


def test_a_scene_named_in_lower_case_lifts_one_operator_and_plans_the_game_s_spelling() -> None:
    # The family wrote its facts "tv stand" where its actions say "TV stand": one operator, not one per name.
    assert lift("put remote 1 in TV stand", ["remote 1", "tv stand"]) == ("put {0} in {1}", ("remote 1", "tv stand"))
    assert lift("put book 2 in TV stand", ["book 2", "tv stand"])[0] == "put {0} in {1}"
    # A plan written from the scene's names is the admissible action of the game's spelling.
    assert resolve("put remote 1 in tv stand", ["look", "put remote 1 in TV stand"], tidy.DOMAIN) == "put remote 1 in TV stand"


def seen(triples: list[tuple[str, str, str]], admissible: list[str], at: str = "kitchen") -> Observed:
    return Observed.start(Observation("find the apple", "You are in the kitchen.", admissible, triples, "", location=at),
                          TEXTWORLD)


def test_a_move_through_a_door_seen_closed_opens_it_first_even_where_the_move_is_listed() -> None:
    observed = seen([("wooden door", "north of", "kitchen"), ("wooden door", "is", "closed")],
                    ["go north", "open wooden door", "look"])
    assert _through("kitchen", "north", observed) == ["open wooden door", "go north"]
    opened = seen([("wooden door", "north of", "kitchen"), ("wooden door", "is", "open")], ["go north", "look"])
    assert _through("kitchen", "north", opened) == ["go north"]


def test_find_x_by_the_map_goes_where_the_memory_says_such_things_were() -> None:
    observed = seen([("exit", "east of", "kitchen"), ("exit", "west of", "kitchen")], ["go east", "go west"])
    observed.update("go east", Observation("x", "You are in the pantry.", ["go west"], [("exit", "west of", "pantry")], "",
                                           location="pantry"))
    observed.update("go west", Observation("x", "You are in the kitchen.", ["go east", "go west"],
                                           [("exit", "east of", "kitchen"), ("exit", "west of", "kitchen")], "",
                                           location="kitchen"))
    remembered = Places(TEXTWORLD, ("memory",), memory=lambda kind: [("pantry", 3)] if kind == "apple" else [])
    plan = find_plan(["apple"], observed, remembered)
    assert plan is not None and plan.steps == ("go east",)  # not the unexplored west, where nothing was remembered
    blind = find_plan(["apple"], observed, Places(TEXTWORLD, ()))
    assert blind is not None and blind.steps == ("go west",)


@pytest.fixture
def tidy_family(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "FAMILIES", dict(registry.FAMILIES))
    registry.register("tidy", tidy.from_params, tidy.DOMAIN)


def test_the_card_of_a_family_s_run_names_its_own_grammar_and_task_text(tmp_path: Path, tidy_family) -> None:
    spec = str(Path(__file__).parent / "families" / "tidy.toml")
    played_rounds(tmp_path, RandomChoiceLLM(0), spec, AgentConfig(ask="hard-coded", sources=(KnowledgeSource.LLM,)))
    with Store(tmp_path / "played.db") as store:
        (run,) = store.runs()
        card = results_card(store, run.id)
    text = card.markdown()
    assert "the family's own (its admissible actions)" in text and "the family's own task text" in text
    assert "move X to Y" not in text and "put X in/on Y" not in text
