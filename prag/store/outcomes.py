"""What the figures of a run read of each of its agent episodes (prag.run.metrics, `prag compare`):
the episode's outcome and costs, and of its `extra` what they count: who chose each action, the
goal's reading (its reader, the readings dropped, the first and the last formal goal read), a
person's effort, and the family's own goal sentence where the goal was told in other words.

`Store.outcomes` reads these columns alone, and of each extra what the figures read of it
(`read`; prag.store.episode_extra.stored_figures, which says what that costs); `Outcome.of` takes
the same from an episode already in memory. Reading the episodes whole instead (`EpisodeRecord`s)
took 0.39 CPU seconds on the 10k episodes of benchmarks/cli_latency.py and 1.19 on 10k episodes
of a real run; read so, 0.15 and 0.47 (medians of 6, on a loaded core). Picking the values with
SQLite's JSON functions was slower (0.23-0.30 and 0.59-0.69): SQLite parsed each extra three
times, twice for `json_each`.

The values read are checked as they are read (prag.store.values): a count that is not a whole
number, a name that is not text, is a damaged store. What the figures do not read (an episode's
thoughts, sub-goals, retrieved episodes, ...) is not checked here; `prag export` checks it all.
"""
from __future__ import annotations

import gc
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from prag.llm.base import Cost
from prag.sources import StepSource
from prag.store.episode_extra import Effort, ExtraFigures, stored_figures
from prag.store.values import stored_float, stored_int

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
        return cls(
            episode.id, episode.run_id, episode.round, episode.task_id, episode.task_type, episode.won,
            episode.n_actions, episode.shortest_path, episode.score, episode.cost, episode.reasks, episode.seconds,
            *_of_extra(ExtraFigures.of(episode.extra), episode.n_actions),
        )


def _of_extra(extra: ExtraFigures, actions: int) -> tuple[dict[str, int], Effort, ReadingOutcome | None, str | None, str | None]:
    """An outcome's last fields, read of its extra: who chose the actions (an episode stored before
    decisions were recorded has none, and every action of it was the LLM's), a person's effort,
    the goal's reading, the family's own goal sentence, the family."""
    sources: dict[str, int] = extra.decisions or {StepSource.LLM: actions}
    reading = extra.reading
    read = None if reading is None else ReadingOutcome(
        reading.source or "none", sum(1 for h in reading.hypotheses if h.dropped), ReadGoal(reading.task, reading.slots),
        ReadGoal(reading.hypotheses[0].task, reading.hypotheses[0].slots) if reading.hypotheses else None,
    )
    return sources, extra.effort, read, extra.goal_sentence, extra.env


_QUERY = """
select id, run_id, round, task_id, task_type, won, n_steps, shortest_path, score, llm_calls, prompt_tokens,
       cached_tokens, completion_tokens, reasks, seconds, llm_seconds, extra
from episodes where source = 'agent' and run_id in ({runs})
"""


def read(path: Path, conn: sqlite3.Connection, run_ids: Sequence[str]) -> list[Outcome]:
    """The outcomes of the agent's episodes of these runs (at most SQLite's number of parameters)."""
    rows = conn.execute(_QUERY.format(runs=", ".join("?" for _ in run_ids)), list(run_ids)).fetchall()
    # What is read holds no reference cycles, so the garbage collector waits: on 13,440 episodes
    # of real runs it ran 950 times during the read and freed nothing, a tenth of its time.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return [_outcome(path, row) for row in rows]
    finally:
        if collecting:
            gc.enable()


def _outcome(path: Path, row: tuple[Any, ...]) -> Outcome:
    (id_, run_id, round_, task_id, task_type, won, n_steps, shortest_path, score, llm_calls, prompt_tokens,
     cached_tokens, completion_tokens, reasks, seconds, llm_seconds, extra) = row
    of = f"of episode {id_}"
    n_actions = _count(path, of, "n_steps", n_steps, empty=None)
    return Outcome(
        id_, run_id, _count(path, of, "round", round_), task_id, task_type or "",
        bool(_count(path, of, "won", won, empty=None)), n_actions, shortest_path,
        None if score is None else _number(path, of, "score", score),
        Cost(_count(path, of, "llm_calls", llm_calls), _count(path, of, "prompt_tokens", prompt_tokens),
             _count(path, of, "cached_tokens", cached_tokens), _count(path, of, "completion_tokens", completion_tokens),
             _number(path, of, "llm_seconds", llm_seconds, empty=0.0)),
        _count(path, of, "reasks", reasks), _number(path, of, "seconds", seconds, empty=0.0),
        *_of_extra(stored_figures(path, id_, extra), n_actions),
    )


# The columns below are read of every episode, 10k of them on a large store: each is taken as it
# is when it is what prag writes, before the name an error would need is spelled.

def _count(path: Path, of: str, name: str, value: Any, empty: int | None = 0) -> int:
    """A count read from an episode: none (NULL in a row written by an early version) is `empty`,
    by default 0."""
    return value if type(value) is int else stored_int(path, f"episodes.{name} {of}", value, empty=empty)


def _number(path: Path, of: str, name: str, value: Any, empty: float | None = None) -> float:
    """A number read from an episode; none (NULL) is `empty`."""
    return value if type(value) is float else stored_float(path, f"episodes.{name} {of}", value, empty=empty)
