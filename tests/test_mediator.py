"""The ask policies' decisions on scripted mediator states, and When2Ask's reward."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from prag.agent.sources.mediator import (
    Always,
    HardCoded,
    Learned,
    MediatorState,
    RandomAsk,
    ask_reward,
)

FOLLOWING = MediatorState(
    t=3, max_steps=20, has_plan=True, plan_source="episode", plan_left=4, next_admissible=True,
    last_changed=True, steps_since_ask=2, asks=1, n_admissible=12, holding=False,
)


def test_always_asks_even_with_a_good_plan():
    assert Always().ask(FOLLOWING)


@pytest.mark.parametrize(
    "change, asks",
    [
        ({}, False),  # a plan whose next step can be taken is followed
        ({"has_plan": False, "plan_source": "", "plan_left": 0}, True),
        ({"plan_left": 0}, True),  # exhausted
        ({"next_admissible": False}, True),
        ({"last_changed": False}, True),  # the last step changed nothing
    ],
)
def test_hard_coded_asks_only_when_the_plan_cannot_go_on(change, asks):
    assert HardCoded().ask(replace(FOLLOWING, **change)) is asks


def test_random_asks_at_its_rate_and_always_without_a_plan():
    policy = RandomAsk(p=0.3, seed=1)
    share = np.mean([policy.ask(FOLLOWING) for _ in range(4000)])
    assert 0.27 < share < 0.33
    assert all(policy.ask(replace(FOLLOWING, has_plan=False, plan_left=0)) for _ in range(50))
    with pytest.raises(ValueError):
        RandomAsk(p=1.5)


def test_learned_policy_reads_the_features_but_cannot_skip_asking_without_a_plan():
    seen: list[np.ndarray] = []
    never = Learned(lambda features: seen.append(features) or False)
    assert never.ask(FOLLOWING) is False
    assert never.ask(replace(FOLLOWING, plan_left=0)) is True
    assert len(seen) == 1 and seen[0].shape == (MediatorState.FEATURES,)


def test_features_are_bounded_and_tell_states_apart():
    a = FOLLOWING.features()
    b = replace(FOLLOWING, next_admissible=False, holding=True).features()
    assert a.dtype == np.float32 and a.min() >= 0 and a.max() <= 1
    assert not np.array_equal(a, b)
    assert replace(FOLLOWING, plan_left=500, steps_since_ask=500, asks=500).features().max() <= 1


def test_reward_penalises_asks_that_return_the_plan_being_followed():
    assert ask_reward(won=True, asks_returning_same_plan=0, penalty=0.1) == 1.0
    assert ask_reward(won=True, asks_returning_same_plan=3, penalty=0.1) == pytest.approx(0.7)
    assert ask_reward(won=False, asks_returning_same_plan=2, penalty=0.1) == pytest.approx(-0.2)
    assert ask_reward(won=True, asks_returning_same_plan=0, penalty=0.1, gamma=0.9, steps=2) == pytest.approx(0.81)
