"""Success and cost figures per round, and the round-to-round transition table (P-RAG §4).

Pure functions over `Outcome`s, what the figures read of an episode (prag.store.outcomes;
`n_actions` is P_i): no store, no I/O. Callers pass the agent's own episodes (`Store.outcomes`,
or `Outcome.of` an `EpisodeRecord`); human corrections are not plays and are left out before
they get here.

Definitions, for the N episodes of one round of one run:

- **Total SR** = (1/N) Σ S_i, with S_i = 1 when episode i was won (`Observation.won`), else 0.
- **Task SR** = the mean over the task types T present in the round of SR_T, where SR_T is the
  success rate of the episodes of type T. Every type weighs the same however many episodes it
  has, so a round with 9 easy tasks of one type and 1 hard task of another is not dominated by
  the easy type (P-RAG reports it beside Total SR for that reason).
- **SPL** = (1/N_L) Σ S_i · L_i / max(L_i, P_i) over the N_L episodes whose shortest path L_i is
  known, with P_i the number of actions the agent took. Episodes without a known L_i are left out
  rather than guessed (taking L_i = P_i would score every such success 1); `spl_episodes` says how
  many counted, and SPL is None when none did. A won episode with L_i = P_i = 0 (won at reset)
  scores 1. A success with P_i < L_i cannot happen with a true shortest path; the formula caps it
  at 1 all the same.
- **Mean score** (families that keep a score: ScienceWorld's 0-100 with partial credit) = the mean
  of the episodes' final scores, a failed episode (ScienceWorld's -100) counting 0; **task mean
  score** = the mean over the task types of their mean scores, as ScienceWorld's papers report it
  (the mean over its 30 tasks). None where no episode has a score.
- Cost: LLM calls and tokens per episode; the reused share = cached / prompt tokens (prefix-cache
  hits); re-asks per step = re-asks / actions taken; wall time per episode, and per step split into
  the LLM part and the rest (environment, retrieval, embedding: `seconds - cost.seconds`).
- Steps by source: how many actions each step source chose (the first field of each of the
  episode's `decisions`, one of `prag.sources.StepSource`); the actions of an episode stored before
  decisions were recorded were all the LLM's (`Outcome.sources`).
- Goals read right: of the episodes told their goal in other words than the family's own sentence
  (a spec's `goals`; the episode keeps the game's sentence as `goal_sentence`), those whose first
  and whose last reading (prag.agent.goals.readers) was the game's formal goal.
- A person's effort (Soar ITL): their instructions, the words in them and their yes/no answers,
  summed over the round's episodes (each episode's `effort`; none where it was not recorded).
"""
from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from itertools import combinations
from typing import TYPE_CHECKING, Any

from prag.errors import PragError
from prag.llm.base import Cost
from prag.store.episode_extra import Effort
from prag.store.outcomes import Outcome, ReadGoal

if TYPE_CHECKING:
    from prag.envs.goals import FormalGoal, GoalSchema


@dataclass(frozen=True)
class SuccessFigures:
    """Success of a group of episodes: a whole round, or one task type in it."""

    episodes: int
    wins: int
    spl: float | None  # None when no episode has a known shortest path
    spl_episodes: int  # episodes with a known shortest path, the ones SPL averages over
    score: float | None = None  # the mean final score of the episodes that have one (0-100)

    @property
    def success_rate(self) -> float:
        return self.wins / self.episodes if self.episodes else 0.0


@dataclass(frozen=True)
class TypeMetrics:
    task_type: str
    success: SuccessFigures


@dataclass(frozen=True)
class RoundMetrics:
    """Figures of one round of one run; see the module docstring for the definitions."""

    run_id: str
    round: int
    success: SuccessFigures
    task_sr: float
    by_type: tuple[TypeMetrics, ...]  # sorted by task type
    steps: int
    cost: Cost  # of the LLM calls
    reasks: int
    seconds: float
    sources: tuple[tuple[str, int], ...] = ()  # (who chose, actions), most first
    effort: Effort = field(default_factory=Effort)  # what a person's instructions and yes/no cost
    readings: tuple[tuple[str, int], ...] = ()  # (goal reader, episodes played under its reading), most first
    dropped_readings: int = 0  # readings shown wrong during the round's episodes and dropped
    # of the episodes whose goal was worded other than the family's own sentence (the spec's `goals`):
    # how many, whose first reading was right, whose last reading was right
    reading_scores: tuple[int, int, int] = (0, 0, 0)

    @property
    def episodes(self) -> int:
        return self.success.episodes

    @property
    def total_sr(self) -> float:
        return self.success.success_rate

    @property
    def spl(self) -> float | None:
        return self.success.spl

    @property
    def mean_score(self) -> float | None:
        return self.success.score

    @property
    def task_mean_score(self) -> float | None:
        scores = [t.success.score for t in self.by_type if t.success.score is not None]
        return sum(scores) / len(scores) if scores else None

    @property
    def calls_per_step(self) -> float | None:
        return self.cost.calls / self.steps if self.steps else None

    @property
    def calls_per_episode(self) -> float:
        return self.cost.calls / self.episodes

    @property
    def tokens_per_episode(self) -> float:
        return (self.cost.prompt_tokens + self.cost.completion_tokens) / self.episodes

    @property
    def reuse_share(self) -> float | None:
        return self.cost.cached_tokens / self.cost.prompt_tokens if self.cost.prompt_tokens else None

    @property
    def reasks_per_step(self) -> float | None:
        return self.reasks / self.steps if self.steps else None

    @property
    def seconds_per_episode(self) -> float:
        return self.seconds / self.episodes

    @property
    def seconds_per_step(self) -> float | None:
        return self.seconds / self.steps if self.steps else None

    @property
    def llm_seconds_per_step(self) -> float | None:
        return self.cost.seconds / self.steps if self.steps else None

    @property
    def other_seconds_per_step(self) -> float | None:
        return (self.seconds - self.cost.seconds) / self.steps if self.steps else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "round": self.round,
            "episodes": self.episodes,
            "wins": self.success.wins,
            "total_sr": self.total_sr,
            "task_sr": self.task_sr,
            "spl": self.spl,
            "spl_episodes": self.success.spl_episodes,
            "mean_score": self.mean_score,
            "task_mean_score": self.task_mean_score,
            "steps": self.steps,
            "llm_calls_per_step": self.calls_per_step,
            "llm_calls_per_episode": self.calls_per_episode,
            "prompt_tokens_per_episode": self.cost.prompt_tokens / self.episodes,
            "cached_tokens_per_episode": self.cost.cached_tokens / self.episodes,
            "completion_tokens_per_episode": self.cost.completion_tokens / self.episodes,
            "reuse_share": self.reuse_share,
            "reasks_per_step": self.reasks_per_step,
            "seconds_per_episode": self.seconds_per_episode,
            "seconds_per_step": self.seconds_per_step,
            "llm_seconds_per_step": self.llm_seconds_per_step,
            "other_seconds_per_step": self.other_seconds_per_step,
            "steps_by_source": dict(self.sources),
            "person_effort": asdict(self.effort),
            "goals_read_by": dict(self.readings),
            "readings_dropped": self.dropped_readings,
            "goals_worded": self.reading_scores[0],
            "first_reading_right": self.reading_scores[1],
            "last_reading_right": self.reading_scores[2],
            "by_type": [
                {
                    "task_type": t.task_type,
                    "episodes": t.success.episodes,
                    "wins": t.success.wins,
                    "success_rate": t.success.success_rate,
                    "spl": t.success.spl,
                    "spl_episodes": t.success.spl_episodes,
                    "mean_score": t.success.score,
                }
                for t in self.by_type
            ],
        }


def spl_term(won: bool, shortest: int, taken: int) -> float:
    """S_i · L_i / max(L_i, P_i) for one episode with a known shortest path."""
    if not won:
        return 0.0
    longest = max(shortest, taken)
    return shortest / longest if longest else 1.0


def success_figures(episodes: Iterable[Outcome]) -> SuccessFigures:
    group = list(episodes)
    terms = [spl_term(e.won, e.shortest_path, e.n_actions) for e in group if e.shortest_path is not None]
    scores = [max(e.score, 0.0) for e in group if e.score is not None]
    return SuccessFigures(
        episodes=len(group),
        wins=sum(e.won for e in group),
        spl=sum(terms) / len(terms) if terms else None,
        spl_episodes=len(terms),
        score=sum(scores) / len(scores) if scores else None,
    )


def steps_by_source(episodes: Iterable[Outcome]) -> Counter[str]:
    """Actions taken, by the source that chose them."""
    counts: Counter[str] = Counter()
    for episode in episodes:
        counts.update(episode.sources)
    return counts


def readings_by_source(episodes: Iterable[Outcome]) -> tuple[Counter[str], int]:
    """Episodes by the goal reader whose reading they played under last (prag.agent.goals.readers;
    "none": nothing read the goal), and how many readings were dropped on the way."""
    counts: Counter[str] = Counter()
    dropped = 0
    for episode in episodes:
        reading = episode.reading
        if reading is None:
            continue
        counts[reading.reader] += 1
        dropped += reading.dropped
    return counts, dropped


def reading_scores(episodes: Iterable[Outcome]) -> tuple[int, int, int]:
    """(episodes told their goal in other words than the family's own sentence, those whose first
    reading was that goal, those whose last reading was): how well goals in people's words were read."""
    worded = first = last = 0
    # One look-up per family: an unknown one (an episode without `env`, from an older prag or an
    # import) is looked for among the installed packages' entry points, which reads every
    # package's metadata: once per episode, `prag compare` took minutes on 10k such episodes.
    schemas: dict[str, GoalSchema | None] = {}
    for episode in episodes:
        sentence, reading = episode.goal_sentence, episode.reading
        if sentence is None or reading is None:
            continue
        env = str(episode.env)
        if env not in schemas:
            schemas[env] = _schema(env)
        schema = schemas[env]
        if schema is None:
            continue
        truth = schema.read(sentence)
        worded += 1
        first += reading.first is not None and _names(reading.first, truth)
        last += _names(reading.last, truth)
    return worded, first, last


def _schema(env: str) -> GoalSchema | None:
    from prag.envs import registry  # the families load for runs with worded goals alone: `prag compare` answers sooner

    try:
        return registry.domain(env).schema()
    except PragError:  # a family this prag does not know
        return None


def _names(reading: ReadGoal, truth: FormalGoal | None) -> bool:
    """Whether a stored reading is the formal goal `truth`."""
    return truth is not None and reading.task == truth.task and reading.slots == dict(truth.slots)


def person_effort(episodes: Iterable[Outcome]) -> Effort:
    """A person's instructions, words and yes/no answers over the episodes."""
    return sum((episode.effort for episode in episodes), Effort())


def _round_metrics(run_id: str, round_: int, group: list[Outcome]) -> RoundMetrics:
    types: dict[str, list[Outcome]] = defaultdict(list)
    for episode in group:
        types[episode.task_type].append(episode)
    by_type = tuple(TypeMetrics(name, success_figures(types[name])) for name in sorted(types))
    readers, dropped = readings_by_source(group)
    return RoundMetrics(
        run_id=run_id,
        round=round_,
        success=success_figures(group),
        task_sr=sum(t.success.success_rate for t in by_type) / len(by_type),
        by_type=by_type,
        steps=sum(e.n_actions for e in group),
        cost=Cost.total(e.cost for e in group),
        reasks=sum(e.reasks for e in group),
        seconds=sum(e.seconds for e in group),
        sources=tuple(sorted(steps_by_source(group).items(), key=lambda item: (-item[1], item[0]))),
        effort=person_effort(group),
        readings=tuple(sorted(readers.items(), key=lambda item: (-item[1], item[0]))),
        dropped_readings=dropped,
        reading_scores=reading_scores(group),
    )


def _by_run_and_round(episodes: Iterable[Outcome]) -> dict[tuple[str, int], list[Outcome]]:
    groups: dict[tuple[str, int], list[Outcome]] = defaultdict(list)
    for episode in episodes:
        groups[(episode.run_id, episode.round)].append(episode)
    return groups


def round_metrics(episodes: Iterable[Outcome]) -> list[RoundMetrics]:
    """One `RoundMetrics` per (run, round) that has episodes, in (run, round) order."""
    groups = _by_run_and_round(episodes)
    return [_round_metrics(run_id, round_, groups[(run_id, round_)]) for run_id, round_ in sorted(groups)]


@dataclass(frozen=True)
class Transition:
    """P-RAG's Table 4 cell pair: how tasks of round `from_round` fare in round `to_round`.

    Tasks are matched by task id within one run; a task played in only one of the two rounds
    (an interrupted run) is not counted, and a pair of rounds without a common task has no row.
    """

    run_id: str
    from_round: int
    to_round: int
    succeeded: int  # tasks won in from_round (and played in to_round)
    succeeded_then_won: int  # ... of which won again in to_round
    failed: int  # tasks lost in from_round (and played in to_round)
    failed_then_won: int  # ... of which won in to_round

    @property
    def kept_share(self) -> float | None:
        """Of the tasks that succeeded in round r, the share that succeed in round r + m."""
        return self.succeeded_then_won / self.succeeded if self.succeeded else None

    @property
    def recovered_share(self) -> float | None:
        """Of the tasks that failed in round r, the share that succeed in round r + m."""
        return self.failed_then_won / self.failed if self.failed else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "from_round": self.from_round,
            "to_round": self.to_round,
            "succeeded": self.succeeded,
            "succeeded_then_won": self.succeeded_then_won,
            "kept_share": self.kept_share,
            "failed": self.failed,
            "failed_then_won": self.failed_then_won,
            "recovered_share": self.recovered_share,
        }


def transitions(episodes: Iterable[Outcome]) -> list[Transition]:
    """One `Transition` per run and pair of its rounds r < r + m, in (run, r, r + m) order."""
    won: dict[str, dict[int, dict[str, bool]]] = defaultdict(lambda: defaultdict(dict))
    for episode in episodes:
        won[episode.run_id][episode.round][episode.task_id] = episode.won
    table = []
    for run_id in sorted(won):
        rounds = won[run_id]
        for early, late in combinations(sorted(rounds), 2):
            shared = rounds[early].keys() & rounds[late].keys()
            if not shared:  # e.g. a train round and the test round: different tasks, nothing to match
                continue
            before_won = [task for task in shared if rounds[early][task]]
            before_lost = [task for task in shared if not rounds[early][task]]
            table.append(
                Transition(
                    run_id=run_id,
                    from_round=early,
                    to_round=late,
                    succeeded=len(before_won),
                    succeeded_then_won=sum(rounds[late][task] for task in before_won),
                    failed=len(before_lost),
                    failed_then_won=sum(rounds[late][task] for task in before_lost),
                )
            )
    return table
