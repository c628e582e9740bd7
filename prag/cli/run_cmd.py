"""`prag run`: play a task set round after round, retrieving from the store at every step."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)

from prag.cli import app
from prag.cli.common import console, err_console, guarded, injected_llm
from prag.llm import SPEC_HELP
from prag.run.config import (
    ExecutionConfig,
    ExperimentConfig,
    RetrievalConfig,
    RunConfig,
)
from prag.run.runner import RunLog, Runner, resume_config, start_run
from prag.store import Store
from prag.store.stats import store_stats

DEFAULT_SPEC = "alfworld-mini"
DEFAULT_STORE = Path("stores/default.db")
# The options' defaults are the configs' own.
DEFAULT = RunConfig(ExperimentConfig(spec=DEFAULT_SPEC))


@app.command()
@guarded
def run(
    spec: Annotated[str, typer.Argument(help="Task-set spec: a name from `prag envs list` or a .toml path.")] = DEFAULT_SPEC,
    store_path: Annotated[Path, typer.Option("--store", help="Experience store to write to (created if missing).")] = DEFAULT_STORE,
    rounds: Annotated[int, typer.Option("--rounds", help="Rounds of self-iteration (train rounds with --train).")] = DEFAULT.experiment.rounds,
    k: Annotated[int, typer.Option("--k", help="Episodes retrieved into the prompt.")] = DEFAULT.retrieval.k,
    mode: Annotated[str, typer.Option("--mode", help="Retrieval: prag (goal + scene graph), goal, or none.")] = DEFAULT.retrieval.mode,
    llm: Annotated[str, typer.Option("--llm", help=SPEC_HELP)] = DEFAULT.experiment.llm,
    max_steps: Annotated[Optional[int], typer.Option("--max-steps", help="Step cap (default: the spec's).")] = None,
    workers: Annotated[int, typer.Option("--workers", help="Episodes played in parallel within a round.")] = DEFAULT.execution.workers,
    seed: Annotated[int, typer.Option("--seed", help="Seed for the LLM's sampling.")] = DEFAULT.experiment.seed,
    train: Annotated[Optional[str], typer.Option("--train", help="Iterate on this spec, then evaluate SPEC with the store frozen.")] = None,
    include: Annotated[Optional[list[str]], typer.Option("--include", help="Earlier run whose episodes round 0 may retrieve (repeatable).")] = None,
    name: Annotated[Optional[str], typer.Option("--name", help="Run id (default: spec-mode-time).")] = None,
    think: Annotated[bool, typer.Option("--think/--no-think", help="A one-sentence thought before each action (ReAct-style).")] = DEFAULT.agent.think,
    constrain: Annotated[bool, typer.Option("--constrain/--no-constrain", help="Constrained decoding to the admissible actions.")] = DEFAULT.agent.constrained,
    limit: Annotated[Optional[int], typer.Option("--limit", help="Play only the first N tasks of the set.")] = None,
    resume: Annotated[Optional[str], typer.Option("--resume", help="Continue this interrupted run (other options are taken from it).")] = None,
    corrections: Annotated[bool, typer.Option("--corrections/--no-corrections", help="Put transcripts corrected by a person first in the prompt.")] = DEFAULT.retrieval.corrections,
    corrections_k: Annotated[int, typer.Option("--corrections-k", help="Corrections retrieved into the prompt, ahead of the K episodes.")] = DEFAULT.retrieval.corrections_k,
    prior: Annotated[bool, typer.Option("--prior/--no-prior", help="Use the human-written transcripts shipped with prag as the first corrections.")] = DEFAULT.retrieval.prior,
    round0_from: Annotated[Optional[str], typer.Option("--round0-from", help="Start from this run's round 0 (same settings, another --mode or --k): compare modes from one round 0.")] = None,
    llm_timeout: Annotated[float, typer.Option("--llm-timeout", help="Seconds one request to an LLM server may take.")] = DEFAULT.execution.llm_timeout,
    llm_retries: Annotated[int, typer.Option("--llm-retries", help="Further requests after one to an LLM server failed.")] = DEFAULT.execution.llm_retries,
    ask: Annotated[str, typer.Option("--ask", help="When to ask the LLM: always (every step), hard-coded (when the plan from experience cannot go on), random, or learned (`prag train-asker`).")] = DEFAULT.agent.ask,
    ask_p: Annotated[float, typer.Option("--ask-p", help="The random policy's probability of asking.")] = DEFAULT.agent.ask_probability,
    asker: Annotated[Optional[str], typer.Option("--asker", help="With --ask learned: the stored policy, NAME or NAME:VERSION (default: the newest).")] = None,
    answer_cache: Annotated[bool, typer.Option("--answer-cache/--no-answer-cache", help="Serve greedy LLM answers already in the store without running the model.")] = DEFAULT.execution.answer_cache,
    plan_length: Annotated[int, typer.Option("--plan-length", min=1, help="Actions per LLM answer: 1, or the next action and up to N-1 planned after it (followed while the mediator does not ask).")] = DEFAULT.agent.plan_length,
) -> None:
    """Run P-RAG's progressive rounds: round r retrieves the episodes of rounds < r."""
    with Store(store_path) as store:
        if resume:
            run_record, config = resume_config(store, resume)
            store.claim_run(run_record.id)  # refused while another process plays the run
        else:
            config = RunConfig(
                ExperimentConfig(spec=spec, rounds=rounds, train=train, limit=limit, max_steps=max_steps, llm=llm,
                                 seed=seed, round0_from=round0_from),
                RetrievalConfig(mode=mode, k=k, include_runs=tuple(include or ()), corrections=corrections,
                                corrections_k=corrections_k, prior=prior),
                replace(DEFAULT.agent, think=think, constrained=constrain, ask=ask, ask_probability=ask_p, asker=asker,
                        plan_length=plan_length),
                ExecutionConfig(workers=workers, llm_timeout=llm_timeout, llm_retries=llm_retries, answer_cache=answer_cache),
            )
            run_record = start_run(store, config, name)
        experiment, retrieval = config.experiment, config.retrieval
        log = RunLog(Path("runs") / run_record.id)
        console.print(f"run [bold]{run_record.id}[/] into {store_path}: {experiment.spec}, {experiment.rounds} rounds, "
                      f"mode {retrieval.mode}, k {retrieval.k}, corrections {retrieval.corrections_k if retrieval.corrections else 'off'}"
                      f"{'' if retrieval.prior else ' (no prior)'}, ask {config.agent.ask}, llm {experiment.llm}")
        with _progress() as progress:
            listener = _ProgressListener(progress, log)
            try:
                Runner(store, run_record, config, listener, llm=injected_llm(experiment.llm)).play()
            except KeyboardInterrupt:
                store.set_run_status(run_record.id, "interrupted")
                err_console.print(
                    f"interrupted: finished episodes are stored; continue with "
                    f"`prag run --resume {run_record.id} --store {store_path}`"
                )
                raise typer.Exit(130) from None
        figures = store_stats(store)
    summary = [r for r in figures.rounds if r.run_id == run_record.id]
    (log.directory / "summary.json").write_text(
        json.dumps([{"round": r.round, "episodes": r.episodes, "won": r.won, "success_rate": r.success_rate} for r in summary], indent=2)
    )
    for r in summary:
        console.print(f"round {r.round}: {r.won}/{r.episodes} won ({r.success_rate:.0%})")
    console.print(f"log and summary in {log.directory}; compare rounds with `prag compare {store_path} {run_record.id}`")


def _progress() -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[status]}"),
        TimeElapsedColumn(),
        console=console,
    )


class _ProgressListener:
    """One bar per round, with the round's running success rate; every event also goes to the log."""

    def __init__(self, progress: Progress, log: RunLog) -> None:
        self.progress = progress
        self.log = log
        self.bar: object = None
        self.won = self.played = 0

    def __call__(self, event: str, data: dict) -> None:
        self.log(event, data)
        if event == "round":
            self.won = self.played = 0
            done = data["tasks"] - data["todo"]
            self.bar = self.progress.add_task(f"round {data['round']} ({data['spec']})", total=data["tasks"], completed=done, status="")
        elif event == "episode":
            self.played += 1
            self.won += int(data["won"])
            self.progress.update(
                self.bar,  # type: ignore[arg-type]
                advance=1,
                status=f"won {self.won}/{self.played} ({self.won / self.played:.0%}) last: {data['task_id']} {'won' if data['won'] else 'lost'} in {data['n_steps']} steps",
            )
