"""A results card: one run's figures stated in the protocol papers are compared by.

Of any reported ALFWorld figure the first questions are: which split, how many games (and which
were left out), which step cap, which engine version (the `put X in/on Y` -> `move X to Y` grammar
change broke prompts silently), first try or round r. A card answers them from what the run
recorded (its config, its episodes) and its spec, then gives the figures: SR, per-type SR, steps
per game, SPL, LLM calls and tokens per game, wall time, and the command that plays it again.

`results_card(store, run_id)` builds it; `to_dict()` is the JSON form, `markdown()` the Markdown.
"""
from __future__ import annotations

import os
import shlex
from collections import Counter
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from prag.agent.config import AgentConfig, plans_with_learned
from prag.envs import registry
from prag.errors import PragError
from prag.run.config import ExecutionConfig, RetrievalConfig, recorded_config
from prag.run.metrics import RoundMetrics, round_metrics
from prag.sources import KnowledgeSource
from prag.store import Store
from prag.store.outcomes import Outcome
from prag.store.records import EpisodeRecord, RunRecord
from prag.text import command

# The engine packages each family plays on: their versions go on the card.
ENGINES: dict[str, tuple[str, ...]] = {
    "alfworld": ("alfworld", "textworld"),
    "alfworld-gen": ("alfworld", "textworld"),
    "textworld": ("textworld",),
    "sciworld": ("scienceworld",),
}
# What a family's score is, where it keeps one: the card states it beside the figures.
SCORES: dict[str, str] = {
    "sciworld": "ScienceWorld's score at the episode's end, 0-100 with partial credit; a failed task "
                "(-100, e.g. a wrong `focus on`) counts 0; task mean score = the mean over task types",
    "textworld": "the game's points at the episode's end (tw-cooking: one a recipe step; a won game "
                 "has them all); task mean score = the mean over task types",
}


@dataclass(frozen=True)
class Protocol:
    family: str
    engine: dict[str, str]  # package -> version installed now (the run records none)
    spec: str
    split: str | None
    games: int  # distinct games of the task set played in the run (with --train: in its last round)
    skipped: list[str] | None  # games of the spec not played, with the reason; None: not known here
    step_cap: int | None
    goal_wording: str
    goal_readers: list[str]
    action_grammar: str
    action_filter: list[str]
    sources: list[str]
    places: list[str]  # what orders the find-X search (prag.agent.world.places)
    action_model: str  # what means-ends search plans with: given or learned
    llm_budget: int | None  # the most LLM calls a game makes (None: no limit)
    llm_seconds: float | None  # the LLM time a game may take, in seconds a step of its cap (None: no limit)
    variations: str | None  # ScienceWorld: how many variations of each task, and the simplifications
    score: str | None  # what the score is, for families that keep one
    shortest_plans: dict[str, int]  # how SPL's shortest plans were found -> episodes, as they recorded it
    ask_policy: str
    model: str
    model_sha256: str | None
    seeds: dict[str, Any]
    retrieval: str
    prag: str
    training: str | None = None  # with --train: the rounds played on the train set before the task set's
    training_rounds: int = 0  # with --train: rounds 0..n-1 played the train set


@dataclass(frozen=True)
class Card:
    run: RunRecord
    protocol: Protocol
    rounds: list[RoundMetrics]
    wall_seconds: float | None  # from the run's start to its finish, when it finished
    command: str
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run.id,
            "status": self.run.status,
            "protocol": self.protocol.__dict__,
            "rounds": [_round_dict(r) for r in self.rounds],
            "wall_seconds": self.wall_seconds,
            "command": self.command,
            "notes": self.notes,
        }

    def markdown(self) -> str:
        p = self.protocol
        engine = ", ".join(f"{name} {v}" for name, v in p.engine.items()) or "no separate engine"
        lines = [
            f"## Results card: run `{self.run.id}` ({self.run.status})",
            "",
            "| protocol | |",
            "|---|---|",
            f"| family | {p.family} ({engine}; prag {p.prag}) |",
            f"| task set | {p.spec}" + (f", split `{p.split}`" if p.split else "") + " |",
            *([f"| training | {p.training} |"] if p.training else []),
            f"| games | {p.games} played; {_skipped_text(p.skipped)} |",
            f"| step cap | {p.step_cap} |",
            *([f"| variations | {p.variations} |"] if p.variations else []),
            *([f"| score | {p.score} |"] if p.score else []),
            f"| goal wording | {p.goal_wording}; read by {', '.join(p.goal_readers) or 'nobody (the goal as worded)'} |",
            f"| action grammar | {p.action_grammar}; filter hides: {', '.join(p.action_filter) or 'nothing'} |",
            f"| sources | {', '.join(p.sources)} |",
            f"| where things are | {', '.join(p.places) or 'no source (places searched as listed)'} |",
            f"| action model | {p.action_model} |",
            f"| LLM budget | {_budget_text(p.llm_budget, p.llm_seconds)} |",
            f"| SPL's shortest plans | {_shortest_plans_text(p.shortest_plans)} |",
            f"| retrieval | {p.retrieval} |",
            f"| ask policy | {p.ask_policy} |",
            f"| model | {p.model}" + (f" (sha256 {p.model_sha256[:16]}…)" if p.model_sha256 else "") + " |",
            f"| seeds | {', '.join(f'{k} {v}' for k, v in p.seeds.items())} |",
            "| tries | " + ("the task set's round is its first try: it retrieves the training rounds only (the store frozen)"
                            if p.training else "round 0 is the first try; round r has retrieved rounds < r") + " |",
            "",
        ]
        scored = any(r.mean_score is not None for r in self.rounds)
        lines += [
            "| round | games | SR | steps/game | SPL | LLM calls/game | tokens/game | seconds/game |"
            + (" mean score | task mean score | LLM calls/step |" if scored else ""),
            "|---|---|---|---|---|---|---|---|" + ("---|---|---|" if scored else ""),
        ]
        for r in self.rounds:
            spl = "-" if r.spl is None else f"{r.spl:.3f}" + ("" if r.success.spl_episodes == r.episodes else f" ({r.success.spl_episodes})")
            lines.append(
                f"| {r.round} | {r.episodes} | {r.total_sr:.1%} ({r.success.wins}/{r.episodes}) | {r.steps / r.episodes:.1f} "
                f"| {spl} | {r.calls_per_episode:.2f} | {r.tokens_per_episode:.0f} | {r.seconds_per_episode:.2f} |"
                + (f" {_score(r.mean_score)} | {_score(r.task_mean_score)} | {r.calls_per_step or 0:.2f} |" if scored else "")
            )
        types = sorted({t.task_type for r in self.rounds for t in r.by_type})
        if types:
            lines += ["", "| task type | " + " | ".join(f"round {r.round}" for r in self.rounds) + " |",
                      "|---|" + "---|" * len(self.rounds)]
            for task_type in types:
                cells = []
                for r in self.rounds:
                    figures = next((t.success for t in r.by_type if t.task_type == task_type), None)
                    cells.append("-" if figures is None else f"{figures.success_rate:.0%} ({figures.wins}/{figures.episodes})")
                lines.append(f"| {task_type} | " + " | ".join(cells) + " |")
        wall = "unfinished" if self.wall_seconds is None else f"{self.wall_seconds:.0f} s from start to finish"
        lines += ["", f"Wall time: {wall}.", "", "Play it again:", "", "```", self.command, "```"]
        lines += [f"\n{note}" for note in self.notes]
        return "\n".join(lines) + "\n"


def results_card(store: Store, run_id: str) -> Card:
    run = store.run(run_id)
    config = recorded_config(run)
    raw = run.config
    experiment, retrieval, agent = config.experiment, config.retrieval, config.agent
    episodes = [e for e in store.episodes(run.id) if e.source == "agent"]
    if not episodes:
        raise PragError(f"run {run.id} has no episodes yet: play it with `{command('prag', 'run', '--resume', run.id, '--store', store.path)}`")
    notes: list[str] = []
    spec = _spec(experiment.spec, notes)
    family = spec.env if spec is not None else next((e.extra.env for e in episodes if e.extra.env is not None), "unknown")
    first_test_round = experiment.rounds if experiment.train else 0  # --train: rounds before it play the train set
    played = {e.task_id for e in episodes if e.round >= first_test_round}
    skipped = _skipped(spec, played, experiment.limit, experiment.max_steps, notes)
    model = experiment.llm
    protocol = Protocol(
        family=family,
        engine={name: _version(name) for name in ENGINES.get(family, ())},
        spec=experiment.spec,
        split=(spec.params.get("split") if spec is not None else None),
        games=len(played),
        skipped=skipped,
        step_cap=experiment.max_steps or (spec.max_steps if spec is not None else None),
        goal_wording=_goal_wording(spec, family),
        goal_readers=list(agent.readers),
        action_grammar=_grammar(episodes, family),
        action_filter=list(spec.hide_actions) if spec is not None else [],
        sources=list(agent.sources),
        places=list(agent.places),
        action_model=_action_model(agent, family),
        llm_budget=agent.llm_budget,
        llm_seconds=agent.llm_seconds,
        variations=_variations(spec) if family == "sciworld" else None,
        score=SCORES.get(family),
        shortest_plans=dict(Counter(e.extra.shortest_plan for e in episodes if e.extra.shortest_plan is not None)),
        ask_policy=agent.ask + (f" ({agent.asker})" if agent.asker else ""),
        model=model,
        model_sha256=_model_sha256(model),
        seeds={"llm": experiment.seed, **({"games": spec.params["seed"]} if spec is not None and "seed" in spec.params else {})},
        retrieval=f"{retrieval.mode}, k {retrieval.k}, corrections {retrieval.corrections_k if retrieval.corrections else 0}"
        + (", prior transcripts" if retrieval.corrections and retrieval.prior else ""),
        prag=str(raw.get("prag", "unknown")),
        training=_training(experiment.train, experiment.rounds),
        training_rounds=first_test_round,
    )
    if not any(e.llm_calls for e in episodes):
        notes.append("The model was never called in this run (0 LLM calls): its figures do not depend on it.")
    return Card(run, protocol, round_metrics(map(Outcome.of, episodes)), _wall(run), rerun_command(run), notes)


def _action_model(agent: AgentConfig, family: str) -> str:
    """What the run's means-ends search planned with, in words."""
    domain = registry.domain(family) if registry.known(family) else None
    if KnowledgeSource.SEARCH not in agent.sources:
        return "none (search is not among the sources)"
    if domain is not None and plans_with_learned(agent, domain):
        return "learned from the episodes each round may see (SAM)"
    if domain is not None and domain.action_model is None:
        return "none (the family has none given, and its goals are not stated as facts)"
    return "given (the family's written model)"


def rerun_command(run: RunRecord) -> str:
    """The `prag run` command line that plays the run's settings again (into a new run)."""
    config = recorded_config(run)
    e, r, a, x = config.experiment, config.retrieval, config.agent, config.execution
    argv = ["prag", "run", e.spec, "--rounds", str(e.rounds), "--mode", r.mode, "--k", str(r.k), "--llm", e.llm,
            "--seed", str(e.seed), "--sources", ",".join(a.sources), "--ask", a.ask, "--workers", str(x.workers)]
    if e.max_steps is not None:
        argv += ["--max-steps", str(e.max_steps)]
    if e.limit is not None:
        argv += ["--limit", str(e.limit)]
    if e.train:
        argv += ["--train", e.train]
    if a.asker:
        argv += ["--asker", a.asker]
    if not r.corrections:
        argv.append("--no-corrections")
    if not r.prior:
        argv.append("--no-prior")
    if a.plan_length != 1:
        argv += ["--plan-length", str(a.plan_length)]
    # Settings left at their defaults are left out; the rest as the options that set them.
    defaults, retrieval_defaults = AgentConfig(), RetrievalConfig()
    if a.readers != defaults.readers:
        argv += ["--readers", ",".join(a.readers)]
    if a.places != defaults.places:
        argv += ["--places", ",".join(a.places)]
    if a.action_model != defaults.action_model:
        argv += ["--action-model", a.action_model]
    if a.limits.retrieve != defaults.limits.retrieve:
        argv += ["--retrieve-at", a.limits.retrieve]
    # Always said: left out, `prag run` would apply its own default budget.
    argv += ["--llm-budget", "none" if a.llm_budget is None and a.llm_seconds is None
             else str(a.llm_budget) if a.llm_budget is not None else f"{a.llm_seconds:g}s"]
    if a.think != defaults.think:
        argv.append("--think" if a.think else "--no-think")
    if a.constrained != defaults.constrained:
        argv.append("--constrain" if a.constrained else "--no-constrain")
    if a.ask == "random":
        argv += ["--ask-p", str(a.ask_probability)]
    if r.corrections_k != retrieval_defaults.corrections_k:
        argv += ["--corrections-k", str(r.corrections_k)]
    for included in r.include_runs:
        argv += ["--include", included]
    if e.round0_from:
        argv += ["--round0-from", e.round0_from]
    if x.executor != ExecutionConfig().executor:
        argv += ["--executor", x.executor]
    return shlex.join(argv)


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _training(train: str | None, rounds: int) -> str | None:
    """With --train: which rounds played which set, the split stated as for the task set."""
    if train is None:
        return None
    spec = _spec(train, [])
    split = spec.params.get("split") if spec is not None else None
    played = "round 0" if rounds == 1 else f"rounds 0-{rounds - 1}"
    return f"{played} on {train}" + (f", split `{split}`" if split else "") + f"; round {rounds} on the task set"


def _variations(spec: Any) -> str | None:
    """ScienceWorld's spec params as the papers state them: variations per task and simplifications."""
    if spec is None:
        return None
    simplifications = spec.params.get("simplifications") or "none"
    return (f"{spec.params.get('variations', 1)} per task of split {spec.params.get('split', 'dev')} "
            f"(seed {spec.params.get('seed', 0)}); simplifications: {simplifications}")


def _round_dict(r: RoundMetrics) -> dict[str, Any]:
    return {
        **r.to_dict(),
        "steps_per_game": r.steps / r.episodes,
        "tokens_per_game": r.tokens_per_episode,
        "by_type": {t.task_type: {"episodes": t.success.episodes, "wins": t.success.wins, "sr": t.success.success_rate,
                                  "mean_score": t.success.score}
                    for t in r.by_type},
    }


def _spec(name: str, notes: list[str]) -> Any:
    from prag.envs.spec import load_spec

    try:
        return load_spec(name)
    except PragError as exc:
        notes.append(f"The spec {name!r} could not be read here ({exc}): its fields are left out.")
        return None


def _skipped(spec: Any, played: set[str], limit: int | None, max_steps: int | None, notes: list[str]) -> list[str] | None:
    if spec is None:
        return None
    try:
        tasks = [t.task_id for t in spec.open(max_steps=max_steps).tasks()]
    except PragError as exc:
        notes.append(f"The spec's games could not be listed here ({exc}): skipped games unknown.")
        return None
    missing = [t for t in tasks if t not in played]
    if not missing:
        return []
    reason = f"--limit {limit}" if limit is not None and len(tasks) > limit else "not played yet (run unfinished)"
    return [f"{len(missing)} of {len(tasks)} ({reason})"]


def _budget_text(calls: int | None, seconds: float | None) -> str:
    if calls is not None:
        return f"{calls} calls a game, then steps at random"
    if seconds is not None:
        return f"{seconds:g} s of LLM time a step of the step cap, then steps at random"
    return "none"


def _shortest_plans_text(found: dict[str, int]) -> str:
    if not found:
        return "as the family finds them (not recorded with the episodes)"
    return "; ".join(f"{source}: {count} episode{'s' if count != 1 else ''}" for source, count in found.items())


def _skipped_text(skipped: list[str] | None) -> str:
    if skipped is None:
        return "skipped: unknown (the spec's games could not be listed here; see the note)"
    return f"not played: {'; '.join(skipped)}" if skipped else "none skipped"


def _goal_wording(spec: Any, family: str) -> str:
    """ALFWorld's: the spec's `goals` param (which wording of the goals the games were played
    with), else its template sentences; any other family's: its own task text. With the spec's
    `goals = "learned"`, the family's goal templates and schema were withheld."""
    learned = "; the family's goal templates and schema withheld (goals = learned)" if getattr(spec, "goals", "") == "learned" else ""
    if family not in ENGINES or ENGINES[family][0] != "alfworld":
        return "the family's own task text" + learned
    chosen = spec.params.get("goals") if spec is not None else None
    if isinstance(chosen, dict):  # a commands file's field
        return f"{chosen.get('field')} of {Path(os.path.expandvars(str(chosen.get('file')))).name}" + learned
    return (str(chosen) if chosen else "template") + learned


def _grammar(episodes: list[EpisodeRecord], family: str) -> str:
    """Which placing verb the games' action space had: ALFWorld changed `put X in/on Y` to `move X to Y`.
    A game file carries its own grammar, so this is read from the actions played, not from a version.
    Any other family's is its own, as its admissible actions list it."""
    if family not in ENGINES or ENGINES[family][0] != "alfworld":
        return "the family's own (its admissible actions)"
    verbs = {s.action.split(" ", 1)[0] for e in episodes for s in e.steps if s.action}
    if "put" in verbs and "move" not in verbs:
        return "put X in/on Y (the older wording, as in json_2.1.1 game files)"
    if "move" in verbs and "put" not in verbs:
        return "move X to Y (the newer wording)"
    return "not seen (no placing action was taken; the agent takes verbs from the admissible commands)"


def _model_sha256(spec: str) -> str | None:
    kind, _, arg = spec.partition(":")
    if kind != "local":
        return None
    from prag.llm.model_files import MODELS

    model = MODELS.get((arg or "1.5b").lower())
    return model.sha256 if model is not None else None


def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"




def _wall(run: RunRecord) -> float | None:
    from datetime import datetime

    if not run.finished_at or not run.created_at:
        return None
    try:
        return (datetime.fromisoformat(run.finished_at) - datetime.fromisoformat(run.created_at)).total_seconds()
    except ValueError:
        return None
