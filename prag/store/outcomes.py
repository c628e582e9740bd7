"""What the figures of a run read of each of its agent episodes (prag.run.metrics, `prag compare`):
the episode's outcome and costs, and of its `extra` what they count: who chose each action, the
goal's reading (its reader, the readings dropped, the first and the last formal goal read), a
person's effort, and the family's own goal sentence where the goal was told in other words.

`Store.outcomes` reads these with one query (`read`): SQLite's JSON functions pick and count them
inside each episode's `extra`, which Python never parses whole. Reading the episodes whole instead
(`EpisodeRecord`s, every field of their `extra` parsed and checked by pydantic) took 0.44 CPU
seconds of `prag compare` on the 10k episodes of benchmarks/cli_latency.py, and 2.5 on 10k
episodes of a real run, whose extras hold a decision per action and every hypothesis of the goal's
reading. `Outcome.of` takes the same values from an episode already in memory.

The values read are checked as they are read (prag.store.values): a count that is not a whole
number, a name that is not text, is a damaged store. What the figures do not read (an episode's
thoughts, sub-goals, retrieved episodes, ...) is not checked here; `prag export` checks it all.
"""
from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from prag.sources import StepSource
from prag.store.episode_extra import Effort
from prag.store.values import damaged_value, stored_float, stored_int

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


@dataclass(frozen=True)
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
    llm_calls: int
    prompt_tokens: int
    cached_tokens: int
    completion_tokens: int
    reasks: int
    seconds: float
    llm_seconds: float
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
            episode.n_actions, episode.shortest_path, episode.score, episode.llm_calls, episode.prompt_tokens,
            episode.cached_tokens, episode.completion_tokens, episode.reasks, episode.seconds, episode.llm_seconds,
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


# One row per agent episode of the runs: its columns, then what its `extra` holds (NULL and ''
# stand for {}, as `stored_extra` reads them). `x` is the extra where it is a JSON object, else
# NULL: then the JSON functions give NULL or nothing rather than fail on text that is not JSON,
# and `bad` is the extra as stored, to be named. From `x`: the values picked (one JSON array, in
# `_PICKED`'s order), whether a reading was kept, its hypotheses and how many were dropped, and
# the source of each decision (a decision stored by older prag is a list, its source first).
# Inside `json_each` an item is taken apart only as the type its `type` column says it is: the
# JSON functions fail on a string item, which they would read as JSON text.
_QUERY = """
select id, run_id, round, task_id, task_type, won, n_steps, shortest_path, score, llm_calls, prompt_tokens,
       cached_tokens, completion_tokens, reasks, seconds, llm_seconds,
       case when x is null then extra end as bad,
       json_extract(x, '$.effort', '$.env', '$.goal_sentence', '$.reading.source', '$.reading.task',
                    '$.reading.slots', '$.reading.hypotheses[0].task', '$.reading.hypotheses[0].slots'),
       json_type(x, '$.reading'),
       json_array_length(x, '$.reading.hypotheses'),
       (select count(*) from json_each(x, '$.reading.hypotheses')
        where case type when 'object' then json_extract(value, '$.dropped') <> '' end),
       (select json_group_array(case type when 'array' then json_extract(value, '$[0]')
                                when 'object' then json_extract(value, '$.source') end)
        from json_each(x, '$.decisions'))
from (select *, case when not json_valid(kept) then null when json_type(kept) = 'object' then kept end as x
      from (select *, coalesce(nullif(extra, ''), '{{}}') as kept from episodes
            where source = 'agent' and run_id in ({runs})))
"""
_PICKED = ("effort", "env", "goal_sentence", "reading.source", "reading.task", "reading.slots",
           "reading.hypotheses.0.task", "reading.hypotheses.0.slots")
_EFFORT = ("instructions", "words", "answers")


def read(path: Path, conn: sqlite3.Connection, run_ids: Sequence[str]) -> list[Outcome]:
    """The outcomes of the agent's episodes of these runs (at most SQLite's number of parameters)."""
    rows = conn.execute(_QUERY.format(runs=", ".join("?" for _ in run_ids)), list(run_ids)).fetchall()
    return [_outcome(path, row) for row in rows]


def _outcome(path: Path, row: tuple[Any, ...]) -> Outcome:
    (id_, run_id, round_, task_id, task_type, won, n_steps, shortest_path, score, llm_calls, prompt_tokens,
     cached_tokens, completion_tokens, reasks, seconds, llm_seconds, bad, picked, kept_reading, hypotheses,
     dropped, decisions) = row
    of = f"of episode {id_}"
    if picked is None:
        raise damaged_value(path, f"episodes.extra {of}", bad, "a JSON object")
    values = dict(zip(_PICKED, json.loads(picked)))
    for name in ("env", "goal_sentence", "reading.source", "reading.task", "reading.hypotheses.0.task"):
        _check(path, name, of, values[name], str, "text")
    for name in ("effort", "reading.slots", "reading.hypotheses.0.slots"):
        _check(path, name, of, values[name], dict, "a JSON object")
    names = json.loads(decisions)
    if not all(isinstance(name, str) for name in names):
        raise damaged_value(path, f"the sources of episodes.extra.decisions {of}", names, "texts")
    if kept_reading not in (None, "null", "object"):
        raise damaged_value(path, f"episodes.extra.reading {of}", kept_reading, "a JSON object")
    effort = values["effort"] or {}
    n_actions = stored_int(path, f"episodes.n_steps {of}", n_steps)

    def count(name: str, value: Any) -> int:  # counts of rows written by early versions may be NULL: 0
        return stored_int(path, f"episodes.{name} {of}", value, empty=0)

    return Outcome(
        id=id_,
        run_id=run_id,
        round=count("round", round_),
        task_id=task_id,
        task_type=task_type or "",
        won=bool(stored_int(path, f"episodes.won {of}", won)),
        n_actions=n_actions,
        shortest_path=shortest_path,
        score=None if score is None else stored_float(path, f"episodes.score {of}", score),
        llm_calls=count("llm_calls", llm_calls),
        prompt_tokens=count("prompt_tokens", prompt_tokens),
        cached_tokens=count("cached_tokens", cached_tokens),
        completion_tokens=count("completion_tokens", completion_tokens),
        reasks=count("reasks", reasks),
        seconds=stored_float(path, f"episodes.seconds {of}", seconds, empty=0.0),
        llm_seconds=stored_float(path, f"episodes.llm_seconds {of}", llm_seconds, empty=0.0),
        sources=_sources(names, n_actions),
        effort=Effort(*(stored_int(path, f"episodes.extra.effort.{name} {of}", effort.get(name, 0)) for name in _EFFORT)),
        reading=None if kept_reading != "object" else ReadingOutcome(
            values["reading.source"] or "none", dropped,
            ReadGoal(values["reading.task"], values["reading.slots"]),
            ReadGoal(values["reading.hypotheses.0.task"], values["reading.hypotheses.0.slots"]) if hypotheses else None,
        ),
        goal_sentence=values["goal_sentence"],
        env=values["env"],
    )


def _check(path: Path, name: str, of: str, value: Any, kind: type, expected: str) -> None:
    """Refuse a value picked from an episode's extra that is not None and not of `kind`."""
    if value is not None and not isinstance(value, kind):
        raise damaged_value(path, f"episodes.extra.{name} {of}", value, expected)
