"""Round metrics and the transition table against values worked out by hand."""
from __future__ import annotations

import pytest

from prag.store.episode_extra import Effort, EpisodeExtra
from prag.run.metrics import round_metrics, spl_term, transitions
from prag.store.outcomes import Outcome
from prag.store.records import EpisodeRecord


def outcome(task_id: str, task_type: str, won: bool, taken: int, shortest: int | None, *,
            run_id: str = "a", round_: int = 0, extra: EpisodeExtra | None = None, **cost) -> Outcome:
    return Outcome.of(EpisodeRecord(run_id=run_id, round=round_, task_id=task_id, task_type=task_type, goal="",
                                    won=won, steps=[], n_actions=taken, shortest_path=shortest,
                                    extra=extra or EpisodeExtra(), **cost))


# Round 0 of run "a", worked out by hand:
#   t1 A won  P=4  L=4     SPL term 1
#   t2 A won  P=8  L=4     SPL term 4/8 = 0.5
#   t3 A lost P=10 L=3     SPL term 0
#   t4 B won  P=5  L=?     not in SPL
#   t5 B lost P=30 L=?     not in SPL
# Total SR 3/5; Task SR = (2/3 + 1/2) / 2 = 7/12; SPL = (1 + 0.5 + 0) / 3 = 0.5 over 3 episodes.
ROUND = [
    outcome("t1", "A", True, 4, 4, llm_calls=4, prompt_tokens=1000, cached_tokens=600, completion_tokens=40,
            reasks=1, seconds=10.0, llm_seconds=8.0),
    outcome("t2", "A", True, 8, 4, llm_calls=9, prompt_tokens=3000, cached_tokens=2400, completion_tokens=90,
            reasks=1, seconds=20.0, llm_seconds=16.0),
    outcome("t3", "A", False, 10, 3, llm_calls=10, prompt_tokens=4000, cached_tokens=3000, completion_tokens=100,
            reasks=0, seconds=25.0, llm_seconds=20.0),
    outcome("t4", "B", True, 5, None, llm_calls=5, prompt_tokens=1500, cached_tokens=1000, completion_tokens=50,
            reasks=2, seconds=12.0, llm_seconds=10.0),
    outcome("t5", "B", False, 30, None, llm_calls=32, prompt_tokens=10500, cached_tokens=9000, completion_tokens=320,
            reasks=4, seconds=63.0, llm_seconds=51.0),
]


def test_success_figures_of_a_round_with_unknown_shortest_paths():
    (r,) = round_metrics(ROUND)
    assert (r.run_id, r.round, r.episodes, r.success.wins) == ("a", 0, 5, 3)
    assert r.total_sr == pytest.approx(0.6)
    assert r.task_sr == pytest.approx(7 / 12)
    assert r.spl == pytest.approx(0.5)
    assert r.success.spl_episodes == 3


def test_per_type_breakdown():
    (r,) = round_metrics(ROUND)
    a, b = r.by_type
    assert (a.task_type, a.success.episodes, a.success.wins) == ("A", 3, 2)
    assert a.success.success_rate == pytest.approx(2 / 3)
    assert a.success.spl == pytest.approx(0.5) and a.success.spl_episodes == 3
    assert (b.task_type, b.success.episodes, b.success.wins) == ("B", 2, 1)
    assert b.success.spl is None and b.success.spl_episodes == 0


def test_cost_figures():
    (r,) = round_metrics(ROUND)
    assert r.steps == 57
    assert r.calls_per_episode == pytest.approx(60 / 5)
    assert r.reuse_share == pytest.approx(16000 / 20000)
    assert r.reasks_per_step == pytest.approx(8 / 57)
    assert r.seconds_per_episode == pytest.approx(130 / 5)
    assert r.seconds_per_step == pytest.approx(130 / 57)
    assert r.llm_seconds_per_step == pytest.approx(105 / 57)
    assert r.other_seconds_per_step == pytest.approx(25 / 57)
    data = r.to_dict()
    assert data["prompt_tokens_per_episode"] == pytest.approx(4000)
    assert data["cached_tokens_per_episode"] == pytest.approx(3200)
    assert data["completion_tokens_per_episode"] == pytest.approx(120)


def test_round_without_tokens_or_steps_reports_no_shares():
    (r,) = round_metrics([outcome("t1", "A", False, 0, None)])
    assert r.reuse_share is None and r.reasks_per_step is None and r.seconds_per_step is None
    assert r.spl is None and r.total_sr == 0.0


def test_task_sr_weighs_every_type_the_same():
    easy = [outcome(f"e{n}", "easy", True, 3, 3) for n in range(9)]
    hard = [outcome("h0", "hard", False, 30, 7)]
    (r,) = round_metrics(easy + hard)
    assert r.total_sr == pytest.approx(0.9)
    assert r.task_sr == pytest.approx((1.0 + 0.0) / 2)
    assert r.spl == pytest.approx(9 / 10)


@pytest.mark.parametrize(
    ("won", "shortest", "taken", "expected"),
    [
        (True, 6, 6, 1.0),  # the shortest path exactly
        (True, 6, 9, 6 / 9),  # detours cost
        (False, 6, 6, 0.0),  # a failure scores 0 however short
        (True, 6, 4, 1.0),  # shorter than "shortest": the shortest path was wrong; capped at 1
        (True, 0, 0, 1.0),  # won at reset
    ],
)
def test_spl_term(won, shortest, taken, expected):
    assert spl_term(won, shortest, taken) == pytest.approx(expected)


def test_rounds_and_runs_are_kept_apart_and_ordered():
    episodes = [
        outcome("t1", "A", True, 2, 2, run_id="b", round_=1),
        outcome("t1", "A", False, 5, 2, run_id="a", round_=1),
        outcome("t1", "A", True, 2, 2, run_id="a", round_=0),
    ]
    assert [(r.run_id, r.round, r.total_sr) for r in round_metrics(episodes)] == [
        ("a", 0, 1.0), ("a", 1, 0.0), ("b", 1, 1.0),
    ]


# Three rounds of five tasks; t5 is missing from round 2 (the run was interrupted).
WINS = {
    0: {"t1": True, "t2": True, "t3": False, "t4": False, "t5": False},
    1: {"t1": True, "t2": False, "t3": True, "t4": False, "t5": True},
    2: {"t1": True, "t2": True, "t3": True, "t4": False},
}


def test_transition_table():
    episodes = [outcome(task, "A", won, 3, 3, round_=r) for r, tasks in WINS.items() for task, won in tasks.items()]
    table = [(t.from_round, t.to_round, t.succeeded, t.succeeded_then_won, t.failed, t.failed_then_won)
             for t in transitions(episodes)]
    assert table == [
        (0, 1, 2, 1, 3, 2),  # won {t1, t2} -> t1 again; lost {t3, t4, t5} -> t3, t5 won
        (0, 2, 2, 2, 2, 1),  # t5 not played in round 2: not counted
        (1, 2, 2, 2, 2, 1),  # won {t1, t3} -> both; lost {t2, t4} -> t2 won
    ]
    first = transitions(episodes)[0]
    assert first.kept_share == pytest.approx(0.5) and first.recovered_share == pytest.approx(2 / 3)


def test_transitions_match_tasks_within_a_run_only():
    episodes = [
        outcome("t1", "A", True, 3, 3, run_id="a", round_=0),
        outcome("t1", "A", False, 3, 3, run_id="b", round_=1),
        outcome("t2", "A", False, 3, 3, run_id="a", round_=0),
        outcome("t2", "A", True, 3, 3, run_id="a", round_=1),
    ]
    (t,) = transitions(episodes)
    assert (t.run_id, t.succeeded, t.failed, t.failed_then_won) == ("a", 0, 1, 1)
    assert t.kept_share is None and t.recovered_share == 1.0


def test_a_persons_effort_is_summed_over_the_round_and_absent_counts_nothing():
    said = [Effort(instructions=2, words=9, answers=6), Effort(instructions=1, words=4, answers=0)]
    group = [outcome(f"t{i}", "A", True, 3, 3, extra=EpisodeExtra(effort=e)) for i, e in enumerate(said)]
    (r,) = round_metrics(group + [outcome("t9", "A", False, 5, 3)])  # played before effort was recorded
    assert r.effort == Effort(instructions=3, words=13, answers=6)
    assert r.to_dict()["person_effort"] == {"instructions": 3, "words": 13, "answers": 6}
    (alone,) = round_metrics(ROUND)
    assert alone.effort == Effort()
