"""What the figures of a run read of each of its agent episodes (prag.run.metrics, `prag compare`):
the episode's outcome and costs, and of its `extra` what they count: who chose each action, the
goal's reading (its reader, the readings dropped, the first and the last formal goal read), a
person's effort, and the family's own goal sentence where the goal was told in other words.

`Store.outcomes` reads these columns alone, and picks these values from each extra as parsed
JSON (`read`); `Outcome.of` takes them from an episode already in memory. Reading the episodes
whole instead (`EpisodeRecord`s, every field of their extra checked by pydantic into records)
took 0.39 CPU seconds on the 10k episodes of benchmarks/cli_latency.py and 1.19 on 10k episodes
of a real run, whose extras hold a decision per action and every hypothesis of the goal's
reading; read so, 0.15 and 0.47 (medians of 6, on a loaded core). Picking the values with
SQLite's JSON functions was slower (0.23-0.30 and 0.59-0.69): SQLite parsed each extra three
times, twice for `json_each`.

The values read are checked as they are read (prag.store.values): a count that is not a whole
number, a name that is not text, is a damaged store. What the figures do not read (an episode's
thoughts, sub-goals, retrieved episodes, ...) is not checked here; `prag export` checks it all.
"""
from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from prag.llm.base import Cost
from prag.sources import StepSource
from prag.store.episode_extra import Effort
from prag.store.values import damaged_value, stored_float, stored_int, stored_json

if TYPE_CHECKING:
    from prag.store.records import EpisodeRecord


class ReadGoal(NamedTuple):
    """The formal goal of a reading, as the episode keeps it (prag.store.episode_extra.GoalReading)."""

    task: str | None
    slots: dict[str, str] | None


@dataclass(frozen=True)
class ReadingOutcome:
    """What the figures read of an episode's goal reading."""

    reader: str  # whose reading the episode played under last ("none": nothing read the goal)
    dropped: int  # readings shown wrong and dropped on the way
    last: ReadGoal  # the reading played under last
    first: ReadGoal | None  # the first hypothesis held; None when none was


@dataclass  # not frozen: a frozen one sets its 17 fields through object.__setattr__, 0.04 s on 10k
class Outcome:
    """One agent episode as the figures read it (the fields named as `EpisodeRecord`'s)."""

    id: int | None  # None for an episode not stored
    run_id: str
    round: int
    task_id: str
    task_type: str
    won: bool
    n_actions: int
    shortest_path: int | None
    score: float | None
    cost: Cost  # of its LLM calls
    reasks: int
    seconds: float
    sources: dict[str, int]  # actions by the step source that chose them (prag.sources)
    effort: Effort
    reading: ReadingOutcome | None  # None: the episode kept no reading
    goal_sentence: str | None  # the family's own, where the goal was told in other words
    env: str | None  # the family

    @classmethod
    def of(cls, episode: EpisodeRecord) -> Outcome:
        """What the figures read of an episode in memory."""
        extra, reading = episode.extra, episode.extra.reading
        return cls(
            episode.id, episode.run_id, episode.round, episode.task_id, episode.task_type, episode.won,
            episode.n_actions, episode.shortest_path, episode.score, episode.cost, episode.reasks, episode.seconds,
            sources=_sources([decision.source for decision in extra.decisions], episode.n_actions),
            effort=extra.effort,
            reading=None if reading is None else ReadingOutcome(
                reading.source or "none", sum(1 for h in reading.hypotheses if h.dropped),
                ReadGoal(reading.task, reading.slots),
                ReadGoal(reading.hypotheses[0].task, reading.hypotheses[0].slots) if reading.hypotheses else None,
            ),
            goal_sentence=extra.goal_sentence,
            env=extra.env,
        )


def _sources(names: list[str], actions: int) -> dict[str, int]:
    """Actions by the source that chose them; an episode stored before decisions were recorded
    has none, and every action of it was the LLM's."""
    return dict(Counter(names)) if names else {StepSource.LLM: actions}


_QUERY = """
select id, run_id, round, task_id, task_type, won, n_steps, shortest_path, score, llm_calls, prompt_tokens,
       cached_tokens, completion_tokens, reasks, seconds, llm_seconds, extra
from episodes where source = 'agent' and run_id in ({runs})
"""


def read(path: Path, conn: sqlite3.Connection, run_ids: Sequence[str]) -> list[Outcome]:
    """The outcomes of the agent's episodes of these runs (at most SQLite's number of parameters)."""
    rows = conn.execute(_QUERY.format(runs=", ".join("?" for _ in run_ids)), list(run_ids)).fetchall()
    return [_outcome(path, row) for row in rows]


def _outcome(path: Path, row: tuple[Any, ...]) -> Outcome:
    (id_, run_id, round_, task_id, task_type, won, n_steps, shortest_path, score, llm_calls, prompt_tokens,
     cached_tokens, completion_tokens, reasks, seconds, llm_seconds, extra_text) = row
    of = f"of episode {id_}"
    extra = stored_json(path, f"episodes.extra {of}", extra_text, dict, empty="{}")  # NULL and '': nothing kept
    n_actions = _count(path, of, "n_steps", n_steps, empty=None)
    effort = _checked(path, of, "effort", extra.get("effort"), dict) or {}  # none: stored before it was kept
    return Outcome(
        id=id_,
        run_id=run_id,
        round=_count(path, of, "round", round_),
        task_id=task_id,
        task_type=task_type or "",
        won=bool(_count(path, of, "won", won, empty=None)),
        n_actions=n_actions,
        shortest_path=shortest_path,
        score=None if score is None else _number(path, of, "score", score),
        cost=Cost(_count(path, of, "llm_calls", llm_calls), _count(path, of, "prompt_tokens", prompt_tokens),
                  _count(path, of, "cached_tokens", cached_tokens), _count(path, of, "completion_tokens", completion_tokens),
                  _number(path, of, "llm_seconds", llm_seconds, empty=0.0)),
        reasks=_count(path, of, "reasks", reasks),
        seconds=_number(path, of, "seconds", seconds, empty=0.0),
        sources=_sources(_decision_sources(path, of, extra.get("decisions")), n_actions),
        effort=Effort(_count(path, of, "extra.effort.instructions", effort.get("instructions")),
                      _count(path, of, "extra.effort.words", effort.get("words")),
                      _count(path, of, "extra.effort.answers", effort.get("answers"))),
        reading=_reading(path, of, extra.get("reading")),
        goal_sentence=_checked(path, of, "goal_sentence", extra.get("goal_sentence"), str),
        env=_checked(path, of, "env", extra.get("env"), str),
    )


# The values below are read of every episode, 10k of them on a large store: each is taken as it
# is when it is what prag writes, before the name an error would need is spelled.

def _count(path: Path, of: str, name: str, value: Any, empty: int | None = 0) -> int:
    """A count read from an episode: none (NULL in a row written by an early version, a key
    missing from an older extra) is `empty`, by default 0."""
    return value if type(value) is int else stored_int(path, f"episodes.{name} {of}", value, empty=empty)


def _number(path: Path, of: str, name: str, value: Any, empty: float | None = None) -> float:
    """A number read from an episode; none (NULL) is `empty`."""
    return value if type(value) is float else stored_float(path, f"episodes.{name} {of}", value, empty=empty)


_KINDS: dict[type, str] = {str: "text", dict: "a JSON object", list: "a JSON list"}


def _checked(path: Path, of: str, name: str, value: Any, kind: type) -> Any:
    """A value of an episode's extra: None, or of `kind` (text, an object, a list)."""
    if value is None or isinstance(value, kind):
        return value
    raise damaged_value(path, f"episodes.extra.{name} {of}", value, _KINDS[kind])


def _decision_sources(path: Path, of: str, decisions: Any) -> list[str]:
    """Who chose each action: the source of each decision, an object or, as older prag stored
    it, a [source, asked, same_plan] list."""
    names: list[str] = []
    for decision in _checked(path, of, "decisions", decisions, list) or []:
        name = decision.get("source") if isinstance(decision, dict) else decision[0] if isinstance(decision, list) and decision else None
        if not isinstance(name, str):
            raise damaged_value(path, f"episodes.extra.decisions {of}", decisions, "decisions, each naming its source")
        names.append(name)
    return names


def _reading(path: Path, of: str, reading: Any) -> ReadingOutcome | None:
    """What the figures read of the goal's reading, None where the episode kept none."""
    if _checked(path, of, "reading", reading, dict) is None:
        return None
    hypotheses = _checked(path, of, "reading.hypotheses", reading.get("hypotheses"), list) or []
    if not all(isinstance(hypothesis, dict) for hypothesis in hypotheses):
        raise damaged_value(path, f"episodes.extra.reading.hypotheses {of}", hypotheses, "readings, each a JSON object")
    return ReadingOutcome(
        _checked(path, of, "reading.source", reading.get("source"), str) or "none",
        sum(1 for hypothesis in hypotheses if hypothesis.get("dropped")),
        _goal(path, of, "reading", reading),
        _goal(path, of, "reading.hypotheses[0]", hypotheses[0]) if hypotheses else None,
    )


def _goal(path: Path, of: str, name: str, reading: dict[str, Any]) -> ReadGoal:
    """The formal goal of a reading or a hypothesis."""
    return ReadGoal(_checked(path, of, f"{name}.task", reading.get("task"), str),
                    _checked(path, of, f"{name}.slots", reading.get("slots"), dict))
