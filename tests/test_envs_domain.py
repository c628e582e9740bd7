"""Each family's Domain: registered beside its factory, and what it says of its grammar (what undoes
an action, where a move goes, how names look, what is held and where things are)."""
from __future__ import annotations

import pytest

from prag.agent.asking.hints import hints_for
from prag.envs.domain import ALFWORLD, ALL_HINTS, GRID, TEXTWORLD, Domain
from prag.envs.registry import FAMILIES, domain
from prag.errors import PragError, SpecError


def test_every_family_has_a_domain_and_alike_families_share_one():
    assert {family: domain(family).name for family in FAMILIES} == {
        "alfworld": "alfworld", "alfworld-gen": "alfworld", "grid": "grid", "textworld": "textworld", "sciworld": "sciworld",
    }
    with pytest.raises(SpecError, match="unknown env 'alfred': use one of alfworld"):
        domain("alfred")


@pytest.mark.parametrize(
    ("dom", "action", "at", "undone"),
    [
        (ALFWORLD, "take apple 1 from countertop 1", None, {"move apple 1 to countertop 1", "put apple 1 in/on countertop 1"}),
        (ALFWORLD, "open fridge 1", None, {"close fridge 1"}),
        (ALFWORLD, "put apple 1 in/on fridge 1", None, set()),  # as ever: only taking and opening are undone
        (GRID, "pick up soda can 1", "shelf 1", {"drop soda can 1 in shelf 1", "drop soda can 1 on shelf 1"}),
        (GRID, "pick up soda can 1", None, set()),  # where it came from is unknown
        (GRID, "drop soda can 1 in bin 1", "bin 1", {"pick up soda can 1"}),
        (GRID, "open fridge 1", "fridge 1", {"close fridge 1"}),
        (TEXTWORLD, "take milk from fridge", "kitchen", {"put milk on fridge", "insert milk into fridge"}),
        (TEXTWORLD, "take red apple", "kitchen", {"drop red apple"}),
        (TEXTWORLD, "drop red apple", "kitchen", {"take red apple"}),
        (TEXTWORLD, "insert milk into fridge", "kitchen", {"take milk from fridge"}),
        (TEXTWORLD, "put knife on counter", "kitchen", {"take knife from counter"}),
        (TEXTWORLD, "go north", "kitchen", set()),
    ],
)
def test_inverse_actions(dom: Domain, action: str, at: str | None, undone: set[str]):
    assert dom.inverse(action, at) == undone


def test_movement_names_a_place_or_a_direction():
    assert ALFWORLD.movement("go to fridge 1") == "fridge 1" and ALFWORLD.movement("open fridge 1") is None
    assert GRID.movement("go to living room") == "living room"
    assert TEXTWORLD.movement("go north") == "north" and TEXTWORLD.movement("go to north") is None
    assert TEXTWORLD.relative_moves and not ALFWORLD.relative_moves and not GRID.relative_moves


def test_entities_and_their_kinds():
    assert ALFWORLD.entities("On the countertop 1, you see a apple 1, and a cd 10.") == ["countertop 1", "apple 1", "cd 10"]
    assert ALFWORLD.kind("apple 1") == "apple"
    assert GRID.entities("On shelf 1, you see soda can 1, teddy bear 2.") == ["shelf 1", "soda can 1", "teddy bear 2"]
    assert GRID.kind("soda can 1") == "soda can"
    assert TEXTWORLD.entities("You see a closed fridge and a red apple. On the table, you see the milk.") == [
        "closed fridge", "red apple", "table", "milk",
    ]
    assert TEXTWORLD.kind("red apple") == "apple"


def test_what_is_held_and_where_things_are_read_from_each_familys_triples():
    alfworld = [("agent", "holds", "mug 1"), ("apple 1", "in", "fridge 1"), ("fridge 1", "is", "open")]
    assert ALFWORLD.held(alfworld) == {"mug 1"}
    assert ALFWORLD.placed(alfworld) == [("apple 1", "in", "fridge 1")]
    grid = [("agent", "holds", "cup 1"), ("apple 1", "inside", "fridge 1"), ("book 1", "onTop", "shelf 1"),
            ("agent", "inRoom", "kitchen")]
    assert GRID.held(grid) == {"cup 1"}
    assert GRID.placed(grid) == [("apple 1", "in", "fridge 1"), ("book 1", "on", "shelf 1")]
    textworld = [("milk", "in", "inventory"), ("knife", "on", "counter"), ("fridge", "at", "kitchen")]
    assert TEXTWORLD.held(textworld) == {"milk"}
    assert TEXTWORLD.placed(textworld) == [("knife", "on", "counter")]


def test_each_domain_names_hints_the_agent_has():
    for dom in (ALFWORLD, GRID, TEXTWORLD):
        assert len(hints_for(dom)) == len(dom.hints) == len(ALL_HINTS)
    with pytest.raises(PragError, match="unknown hints \\['telepathy'\\]"):
        hints_for(Domain("odd", "", (), "go (?P<to>.+)", r"\w+", {}, hints=("loops", "telepathy")))
