"""Plans from experience: re-binding to the present task per domain, and following them."""
from __future__ import annotations

from prag.agent.plans import Follower, Plan, adapt, bind_goals, resolve
from prag.envs.domain import ALFWORLD, GRID

HEAT_APPLE = [
    "go to countertop 1",
    "take apple 1 from countertop 1",
    "go to microwave 1",
    "heat apple 1 with microwave 1",
    "go to countertop 2",
    "move apple 1 to countertop 2",
]


def test_the_same_goal_is_replayed_as_it_was():
    plan = adapt(HEAT_APPLE, "heat some apple and put it in countertop.", "heat some apple and put it in countertop.",
                 ALFWORLD, "episode", origin=7)
    assert plan == Plan(tuple(HEAT_APPLE), "episode", 7, (), "heat some apple and put it in countertop.")
    assert plan.rebound == frozenset()


def test_alfworld_objects_and_receptacles_are_rebound_to_the_present_goal():
    plan = adapt(HEAT_APPLE, "heat an apple and put it on the countertop.", "heat a potato and put it in diningtable.",
                 ALFWORLD, "correction")
    assert plan is not None
    assert dict(plan.bindings) == {"apple": "potato", "countertop": "diningtable"}
    assert plan.steps[1] == "take potato 1 from diningtable 1"
    assert plan.steps[3] == "heat potato 1 with microwave 1"  # the microwave is not named by the goal
    assert plan.rebound == {"potato", "diningtable"}


def test_another_task_template_gives_no_plan():
    assert adapt(HEAT_APPLE, "heat some apple and put it in countertop.", "cool some apple and put it in countertop.",
                 ALFWORLD, "episode") is None
    assert adapt(HEAT_APPLE, "heat some apple and put it in countertop.", "put two apple in countertop.",
                 ALFWORLD, "episode") is None


def test_one_kind_cannot_be_bound_twice():
    assert bind_goals("put apple in apple", "put potato in fridge", {"apple"}) is None


def test_a_rebound_step_takes_whatever_number_the_present_room_gives():
    admissible = ["take potato 3 from diningtable 1", "take fork 1 from diningtable 1", "go to fridge 1"]
    assert resolve("take potato 1 from diningtable 1", admissible, ALFWORLD, frozenset({"potato", "diningtable"})) \
        == "take potato 3 from diningtable 1"


def test_a_step_that_is_not_admissible_or_ambiguous_is_not_forced():
    rebound = frozenset({"potato"})
    assert resolve("take potato 1 from fridge 1", ["go to fridge 1"], ALFWORLD, rebound) is None
    two = ["take potato 2 from diningtable 1", "take potato 3 from diningtable 1"]
    assert resolve("take potato 1 from diningtable 1", two, ALFWORLD, rebound) is None
    # without re-binding, numbers are exact: the same room's "apple 1" is never another apple
    assert resolve("take apple 1 from countertop 1", ["take apple 2 from countertop 1"], ALFWORLD) is None


def test_grid_plans_rebind_kinds_of_two_words():
    actions = ["go to counter 1", "pick up watering can 1", "go to sink 1", "drop watering can 1 in sink 1"]
    plan = adapt(actions, "Put the watering can in the sink.", "Put the teddy bear in the sink.", GRID, "episode")
    assert plan is not None and dict(plan.bindings) == {"watering can": "teddy bear", "sink": "sink"}
    assert plan.steps[1] == "pick up teddy bear 1"
    assert plan.rebound == {"teddy bear"}
    assert resolve("pick up teddy bear 1", ["pick up teddy bear 2", "open sink 1"], GRID, plan.rebound) \
        == "pick up teddy bear 2"


def test_the_follower_goes_step_by_step():
    follower = Follower(adapt(HEAT_APPLE, "g", "g", ALFWORLD, "episode"))
    assert follower.left == 6
    assert follower.step_now(["go to countertop 1", "go to microwave 1"], ALFWORLD) == "go to countertop 1"
    follower.advance()
    assert follower.left == 5
    assert follower.step_now(["go to microwave 1"], ALFWORLD) is None  # its next step is the take
