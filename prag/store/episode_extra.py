"""What an episode keeps beyond its row and steps, declared (after TextWorld's `EnvInfos`): the
agent's report (`AgentReport`: its goal reading, who chose each step, a person's effort, ...) and
what the runner adds (`EpisodeExtra`: task set, family, retrieved episodes, ...).

The store writes it as the episode's `extra` JSON object and reads it back through `stored_extra`, which
refuses a key these types do not declare: a renamed field is an error, not silently lost data.
Every field has a default, because episodes stored by older prag lack the fields added since;
their decisions, stored then as [source, asked, same_plan] lists, read as `Choice` records.

The figures of a run (`prag compare`) read a few of these fields of every episode: `stored_figures`
checks those alone (`ExtraFigures`), as `stored_extra` would, and of the decisions only who chose
each step. Read whole, the extras of 13,440 episodes of real runs (a decision per action, every
hypothesis of the goal's reading) took 1.8 CPU seconds, 1.2 of them making a `Choice` of each of
their 755k decisions; so read, 0.35, as much as picking the values by hand did (prag.store.outcomes
before issue 48). Building the validator costs a process 15-30 ms, once (pydantic's first).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from operator import itemgetter
from typing import Any, TypeVar

from pydantic import ConfigDict, TypeAdapter, ValidationError, field_validator, with_config

from prag.store.values import Where, damaged_value, stored_json

FORBID = ConfigDict(extra="forbid")
_SOURCE = itemgetter("source")  # of a decision stored as an object


@with_config(FORBID)
@dataclass(frozen=True)
class Choice:
    """Who chose one step's action, and whether the mediator asked the LLM (When2Ask's y_t) and
    the answer was the plan's next step anyway."""

    source: str  # a prag.sources.StepSource; older stores may hold names since retired
    asked: bool
    same_plan: bool


@with_config(FORBID)
@dataclass
class Effort:
    """What an episode cost the person: instructions, the words in them, and yes/no answers."""

    instructions: int = 0
    words: int = 0
    answers: int = 0  # yes/no answers

    def said(self, text: str) -> None:
        """Count one instruction and its words."""
        self.instructions += 1
        self.words += len(text.split())

    def answered(self) -> None:
        """Count one yes/no answer."""
        self.answers += 1

    def __add__(self, other: Effort) -> Effort:
        return Effort(self.instructions + other.instructions, self.words + other.words, self.answers + other.answers)


@with_config(FORBID)
@dataclass
class SubGoal:
    """One of a goal's sub-goals (prag.agent.goals.subgoals) and the step that met it."""

    command: str
    met_at: int | None = None  # the step that met it
    how: str = ""  # "taken": its command was; "seen": its effect showed; "tried": a guess at it was taken;
    # "given up": its turn ran out


@with_config(FORBID)
@dataclass(frozen=True)
class Hypothesis:
    """One reading of the goal the agent held (prag.agent.goals.readers.Reading), and why it was
    dropped (None: still held at the end)."""

    sentence: str
    source: str
    confidence: float
    task: str | None = None
    slots: dict[str, str] | None = None
    why: str = ""
    dropped: str | None = None


@with_config(FORBID)
@dataclass(frozen=True)
class GoalReading:
    """How the agent read its instruction: the reading it played under last (`sentence` None:
    none), whether the win's last action bore it out, and every hypothesis on the way."""

    instruction: str
    sentence: str | None = None
    source: str | None = None
    confidence: float | None = None
    task: str | None = None
    slots: dict[str, str] | None = None
    why: str = ""
    fits: bool = True  # episodes stored before it was kept count as fitting
    hypotheses: list[Hypothesis] = field(default_factory=list)


@with_config(FORBID)
@dataclass
class AgentReport:
    """What an agent reports of a finished episode besides its steps and LLM usage."""

    thoughts: list[str] = field(default_factory=list)
    invalid_actions: int = 0
    banned_actions: int = 0
    corrections: list[int] = field(default_factory=list)  # every correction shown, in order
    utterances: list[tuple[int, str]] = field(default_factory=list)  # (t, text): said after step t's observation
    decisions: list[Choice] = field(default_factory=list)  # one per action
    effort: Effort = field(default_factory=Effort)
    reading: GoalReading | None = None
    subgoals: list[SubGoal] = field(default_factory=list)
    steps_past_llm_budget: int = 0

    @field_validator("decisions", mode="before")
    @classmethod
    def _positional(cls, decisions: Any) -> Any:
        return _as_objects(decisions)


def _source(decision: Any) -> str | None:
    """Who chose a stored decision's step; None where it does not say."""
    source = decision.get("source") if isinstance(decision, dict) else None
    return source if isinstance(source, str) else None


def _as_objects(decisions: Any) -> Any:
    """Stored decisions as objects: those older prag stored as [source, asked, same_plan] too."""
    if not isinstance(decisions, list):
        return decisions
    return [dict(zip(("source", "asked", "same_plan"), d)) if isinstance(d, (list, tuple)) and len(d) == 3 else d
            for d in decisions]


@with_config(FORBID)
@dataclass
class EpisodeExtra(AgentReport):
    """An episode's `extra`: the agent's report and what the runner adds to it."""

    spec: str | None = None  # the task set played
    env: str | None = None  # its family
    retrieved: list[int] = field(default_factory=list)  # ids of the episodes in the last prompt
    goal_sentence: str | None = None  # the family's own, where the goal was told in other words
    shortest_plan: str | None = None  # how the family found the plan SPL measures against
    copied_from: int | None = None  # the episode a run's round 0 was copied from (--round0-from)

    def to_json(self) -> dict[str, Any]:
        """The JSON object stored: fields with no value are left out, as they always were."""
        return {key: value for key, value in asdict(self).items() if value is not None}


@with_config(ConfigDict(extra="ignore"))
@dataclass
class ExtraFigures:
    """What the figures of a run read of an episode's extra (prag.store.outcomes): these fields of
    `EpisodeExtra`, declared as there, but the decisions, counted by who chose each step."""

    decisions: dict[str, int] = field(default_factory=dict)  # steps by their decision's source (`Choice.source`)
    effort: Effort = field(default_factory=Effort)
    reading: GoalReading | None = None
    goal_sentence: str | None = None
    env: str | None = None

    @field_validator("decisions", mode="before")
    @classmethod
    def _counted(cls, decisions: Any) -> Counter[Any]:
        """Steps by who chose them, of decisions stored as objects or as older prag's lists."""
        if isinstance(decisions, list):
            try:
                counted = Counter(map(_SOURCE, decisions))  # decisions as prag writes them, at once
            except (TypeError, KeyError):
                counted = Counter(_source(decision) for decision in _as_objects(decisions))
            if all(type(source) is str for source in counted):
                return counted
        raise ValueError("decisions, each naming its source")

    @classmethod
    def of(cls, extra: EpisodeExtra) -> ExtraFigures:
        """What the figures read of an extra in memory."""
        return cls(dict(Counter(decision.source for decision in extra.decisions)), extra.effort, extra.reading,
                   extra.goal_sentence, extra.env)


Extra = TypeVar("Extra", EpisodeExtra, ExtraFigures)
# pydantic's validators, each built when it first reads an extra: `prag stats` reads none.
_ADAPTERS: dict[type, TypeAdapter[Any]] = {}


def stored_extra(store: Where, episode: object, text: Any) -> EpisodeExtra:
    """The stored `extra` column of an episode (its id), checked against the declared fields: a
    key not declared or a value of the wrong type is a damaged store."""
    return _stored(EpisodeExtra, store, episode, text)


def stored_figures(store: Where, episode: object, text: Any) -> ExtraFigures:
    """What the figures read of an episode's stored `extra` column, checked as `stored_extra`
    checks it; the keys they do not read are not looked at."""
    return _stored(ExtraFigures, store, episode, text)


def _stored(kind: type[Extra], store: Where, episode: object, text: Any) -> Extra:
    value = stored_json(store, f"episodes.extra of episode {episode}", text, dict, empty="{}")  # NULL, '': nothing kept
    adapter = _ADAPTERS.get(kind) or _ADAPTERS.setdefault(kind, TypeAdapter(kind))
    try:
        read: Extra = adapter.validate_python(value)
        return read
    except ValidationError as error:
        # The first problem pydantic found, named by where it is in the extra: decisions.0.asked.
        problem = error.errors()[0]
        where = "".join(f".{part}" for part in problem["loc"])
        raise damaged_value(store, f"episodes.extra{where} of episode {episode}", problem["input"],
                            f"what prag writes there ({problem['msg'][0].lower()}{problem['msg'][1:]})") from None
