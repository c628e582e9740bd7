"""`prag run`: play a task set round after round, retrieving from the store at every step."""
from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from prag.agent.agent import parse_readers, parse_sources
from prag.agent.config import AgentConfig
from prag.agent.sources.chain import source_names
from prag.agent.world.places import parse_places
from prag.cli import app
from prag.cli.common import (
    LLMRetriesOpt,
    LLMTimeoutOpt,
    check_llm,
    console,
    run_id_option,
    guarded,
    injected_llm,
    interrupted,
    sources_help,
)
from prag.cli.supervisor import STALE, interrupted_hint, report_run
from prag.envs.spec import load_spec
from prag.errors import DamagedStore, PragError, disk_full, writing
from prag.llm import SPEC_HELP
from prag.names import RUN_ID_CHARS, run_folder
from prag.run.config import (
    ExecutionConfig,
    ExperimentConfig,
    RetrievalConfig,
    RunConfig,
)
from prag.run.executors import executor_name
from prag.run.runner import RunLog, Runner, check_playable, check_stored, resume_config, start_run
from prag.signals import exit_status
from prag.sources import KnowledgeSource
from prag.store import Store
from prag.store.records import RunRecord
from prag.store.stats import store_stats
from prag.text import command, shown

DEFAULT_SPEC = "alfworld-medium"
READERS_HELP = "Who reads the goal into a formal one, in order: template (the family's own sentences), experience (readings verified before), words (the kinds the words name, in English or Korean, and their cue words), llm (under a grammar of the family's goals), facts (where none of these read anything, as a family with no goal schema: the facts that hold once it is done, in the instruction's words, re-worded from a verified reading or read by the LLM under a grammar of facts), person (yes/no when in doubt; `prag console`)."
DEFAULT_STORE = Path("stores/default.db")
# The options' defaults are the configs' own, but for who acts: a command-line run draws on every
# source without a person (experience, search, then the LLM) and asks the LLM only when none of
# them can go on. Measured in the README: alfworld-medium won 12/12 in each of three rounds in
# 7 minutes, where the LLM asked every step won 2/12 of the smaller alfworld-mini rooms in round 0.
# The library's AgentConfig keeps P-RAG's defaults (ask always, experience and the LLM).
# The LLM time a game may spend on steps unless --llm-budget says otherwise, in seconds a step of
# its step cap: set from the measured cost of a call (docs/records/llm_speed.md), so that the local 1.5B
# model, at about 1-3 s a call on 2 CPU cores with the prompt laid out for its cache, chooses
# every step no other source takes, and a slower model a share of them.
DEFAULT_LLM_BUDGET = "3s"
DEFAULT = RunConfig(
    ExperimentConfig(spec=DEFAULT_SPEC),
    agent=AgentConfig(ask="hard-coded", sources=(KnowledgeSource.EXPERIENCE, KnowledgeSource.SEARCH, KnowledgeSource.PROGRESS,
                                               KnowledgeSource.LLM)),
)


@app.command()
@guarded
def run(
    spec: Annotated[str, typer.Argument(help="Task-set spec: a name from `prag envs list` or a .toml path.")] = DEFAULT_SPEC,
    store_path: Annotated[Path, typer.Option("--store", help="Experience store to write to (created if missing).")] = DEFAULT_STORE,
    rounds: Annotated[int, typer.Option("--rounds", min=1, help="Rounds of self-iteration (train rounds with --train).")] = DEFAULT.experiment.rounds,
    k: Annotated[int, typer.Option("--k", min=0, help="Episodes retrieved into the prompt.")] = DEFAULT.retrieval.k,
    mode: Annotated[str, typer.Option("--mode", help="Retrieval: prag (goal + scene graph), goal, or none.")] = DEFAULT.retrieval.mode,
    llm: Annotated[str, typer.Option("--llm", help=SPEC_HELP)] = DEFAULT.experiment.llm,
    max_steps: Annotated[Optional[int], typer.Option("--max-steps", min=1, help="Step cap (default: the spec's).")] = None,
    workers: Annotated[int, typer.Option("--workers", min=1, help="Episodes played in parallel within a round.")] = DEFAULT.execution.workers,
    seed: Annotated[int, typer.Option("--seed", help="Seed for the LLM's sampling.")] = DEFAULT.experiment.seed,
    train: Annotated[Optional[str], typer.Option("--train", help="Iterate on this spec, then evaluate SPEC with the store frozen.")] = None,
    include: Annotated[Optional[list[str]], typer.Option("--include", help="Earlier run whose episodes round 0 may retrieve (repeatable).")] = None,
    name: Annotated[Optional[str], typer.Option("--name", callback=run_id_option, help=f"Run id (default: spec-mode-time): at most {RUN_ID_CHARS} characters, no / or \\; it names the run's folder under runs/.")] = None,
    think: Annotated[bool, typer.Option("--think/--no-think", help="A one-sentence thought before each action (ReAct-style).")] = DEFAULT.agent.think,
    constrain: Annotated[bool, typer.Option("--constrain/--no-constrain", help="Constrained decoding to the admissible actions.")] = DEFAULT.agent.constrained,
    limit: Annotated[Optional[int], typer.Option("--limit", min=1, help="Play only the first N tasks of the set.")] = None,
    resume: Annotated[Optional[str], typer.Option("--resume", help="Continue this interrupted run (other options are taken from it).")] = None,
    corrections: Annotated[bool, typer.Option("--corrections/--no-corrections", help="Put transcripts corrected by a person first in the prompt.")] = DEFAULT.retrieval.corrections,
    corrections_k: Annotated[int, typer.Option("--corrections-k", min=0, help="Corrections retrieved into the prompt, ahead of the K episodes.")] = DEFAULT.retrieval.corrections_k,
    prior: Annotated[bool, typer.Option("--prior/--no-prior", help="Use the human-written transcripts shipped with prag as the first corrections.")] = DEFAULT.retrieval.prior,
    round0_from: Annotated[Optional[str], typer.Option("--round0-from", help="Start from this run's round 0 (same settings, another --mode or --k): compare modes from one round 0.")] = None,
    llm_timeout: LLMTimeoutOpt = DEFAULT.execution.llm_timeout,
    llm_retries: LLMRetriesOpt = DEFAULT.execution.llm_retries,
    ask: Annotated[str, typer.Option("--ask", help="When to ask the LLM: always (every step), hard-coded (when the plan from experience cannot go on), random, or learned (`prag train-asker`).")] = DEFAULT.agent.ask,
    ask_p: Annotated[float, typer.Option("--ask-p", min=0.0, max=1.0, help="The random policy's probability of asking.")] = DEFAULT.agent.ask_probability,
    asker: Annotated[Optional[str], typer.Option("--asker", help="With --ask learned: the stored policy, NAME or NAME:VERSION (default: the newest).")] = None,
    answer_cache: Annotated[bool, typer.Option("--answer-cache/--no-answer-cache", help="Serve greedy LLM answers already in the store without running the model.")] = DEFAULT.execution.answer_cache,
    plan_length: Annotated[int, typer.Option("--plan-length", min=1, help="Actions per LLM answer: 1, or the next action and up to N-1 planned after it (followed while the mediator does not ask).")] = DEFAULT.agent.plan_length,
    executor: Annotated[str, typer.Option("--executor", help="Where the --workers episodes run: threads (this process; worker processes for engines that are not thread-safe, as textworld's), processes, or ray (a Ray cluster; pip install -e '.[ray]').")] = DEFAULT.execution.executor,
    ray_address: Annotated[Optional[str], typer.Option("--ray-address", help="With --executor ray: the cluster to join (HEAD:6379, or auto); default: start a local one.")] = None,
    llm_url: Annotated[Optional[list[str]], typer.Option("--llm-url", help="With --llm openai:MODEL: a server's base URL (repeatable; default OPENAI_BASE_URL, a comma list there too). An episode stays on one server; new ones go to the least loaded.")] = None,
    sources: Annotated[str, typer.Option("--sources", help=f"Where steps come from, comma-separated, tried in this order each step: {sources_help(s for s in source_names() if s != KnowledgeSource.PERSON)}. A person takes part in `prag console`.")] = ",".join(DEFAULT.agent.sources),
    readers: Annotated[str, typer.Option("--readers", help=READERS_HELP)] = ",".join(AgentConfig.readers),
    places: Annotated[str, typer.Option("--places", help="Where the search for a thing the goal needs looks first (with search among --sources), comma-separated: memory (where the store saw such things, in earlier rounds), llm (the LLM's guess, for kinds the memory never saw: one call per kind), rules (the family's placement table); they take precedence in that order, whatever the order given. '' for none: places as listed.")] = ",".join(DEFAULT.agent.places),
    gamble_window: Annotated[float, typer.Option("--gamble-window", min=0.0, max=1.0, help="The last fraction of the step budget in which an irrevocable action (the family's: ScienceWorld's `focus on`) on a thing the goal does not name may be taken, while no score is earned; 1 leaves it to the LLM from the first step, whatever the score. A goal's conditional branch not measured is decided there by what the LLM knows, else drawn, while the score earned is less than a right branch wins at its chance (50 for one of two); in a round a later round follows, at any step where answering pays over both rounds (a wrong answer is ruled out in the next).")] = DEFAULT.agent.gamble_window,
    llm_budget: Annotated[Optional[str], typer.Option("--llm-budget", metavar="N|Ns|none", help=f"What the LLM may spend on a game's steps, its goal readings counted: N calls, or Ns seconds of its time a step of the step cap (3s: 300 s for 100 steps); past it a step only the LLM would choose is drawn at random from the admissible actions (a goal's reading, or which thing seen an instruction describes, is still asked for). Default: {DEFAULT_LLM_BUDGET} when the LLM is not asked every step (--ask always, P-RAG as published, has no limit); none for no limit (TALES' protocol with --ask always or where no other source has a step).")] = None,
    retrieve_at: Annotated[str, typer.Option("--retrieve-at", help="When the episodes in the prompt are retrieved: episode (at an episode's first LLM call, and when its goal is read anew: the prompt's prefix stays for the episode), progress (also when the score changed or a sub-goal was met), or step (every call, as P-RAG plays).")] = DEFAULT.agent.limits.retrieve,
    action_model: Annotated[str, typer.Option("--action-model", help="What means-ends search (with search among --sources) plans with: given (the family's written model; the one learned from the store where it has none) or learned (the model learned from the episodes this round may see: SAM, `prag model`).")] = DEFAULT.agent.action_model,
    explore: Annotated[str, typer.Option("--explore", help="What draws a step past the LLM budget: novel (actions on the things the task names and (verb, thing) pairs this task has not tried first, a verb drawn before its action) or uniform (any admissible action alike).")] = DEFAULT.agent.explore,
) -> None:
    """Run P-RAG's progressive rounds: round r retrieves the episodes of rounds < r.

    Everything is checked before the store is created or a run recorded. Ctrl-C, or an LLM
    server that stops answering, leaves the run `interrupted` with its finished episodes, and
    says how to resume it.
    """
    if resume:
        with Store(store_path, create=False) as store:
            run_record, config = resume_config(store, resume)
            check_playable(config)
            check_stored(store, config)
            check_llm(config.experiment.llm, config.execution)
            store.claim_run(run_record.id)  # refused while another process plays the run
            _play(store, store_path, run_record, config)
        return
    calls, seconds = _llm_budget(llm_budget, ask)
    config = RunConfig(
        ExperimentConfig(spec=spec, rounds=rounds, train=train, limit=limit, max_steps=max_steps, llm=llm,
                         seed=seed, round0_from=round0_from),
        RetrievalConfig(mode=mode, k=k, include_runs=tuple(include or ()), corrections=corrections,
                        corrections_k=corrections_k, prior=prior),
        replace(DEFAULT.agent, think=think, constrained=constrain, ask=ask, ask_probability=ask_p, asker=asker,
                plan_length=plan_length, sources=_run_sources(sources), readers=parse_readers(readers),
                places=parse_places(places), action_model=action_model, llm_budget=calls, llm_seconds=seconds,
                gamble_window=gamble_window, explore=explore, limits=replace(DEFAULT.agent.limits, retrieve=retrieve_at)),
        ExecutionConfig(workers=workers, llm_timeout=llm_timeout, llm_retries=llm_retries, answer_cache=answer_cache,
                        executor=executor, ray_address=ray_address, llm_urls=tuple(llm_url or ())),
    )
    check_playable(config)
    check_llm(llm, config.execution)
    needs = [what for what, given in (("--include names a run", include), ("--round0-from names a run", round0_from),
                                      ("--ask learned needs a trained policy", ask == "learned")) if given]
    if needs and not store_path.exists():
        raise PragError(f"no store at {store_path}: {' and '.join(needs)} of an existing store; give it with --store")
    with Store(store_path) as store:
        _play(store, store_path, start_run(store, config, name), config)


def _play(store: Store, store_path: Path, run_record: RunRecord, config: RunConfig) -> None:
    """Play a recorded run to its end; on Ctrl-C or an error, leave it `interrupted` and say how to resume."""
    resume = command("prag", "run", "--resume", run_record.id, "--store", store_path)
    report_run(store_path, run_record.id)
    try:
        experiment, retrieval = config.experiment, config.retrieval
        log = RunLog(run_folder(Path("runs"), run_record.id))
        train = f" (train on {experiment.train})" if experiment.train else ""
        console.print(shown(
            f"run {run_record.id} into {store_path}: {experiment.spec}{train}, {experiment.rounds} rounds, "
            f"mode {retrieval.mode}, k {retrieval.k}, corrections {retrieval.corrections_k if retrieval.corrections else 'off'}"
            f"{'' if retrieval.prior else ' (no prior)'}, ask {config.agent.ask}, llm {experiment.llm}{_where(config)}"
        ), highlight=False)
        with run_display(log) as display:
            Runner(store, run_record, config, display, llm=injected_llm(experiment.llm), on_wait=display.waiting).play()
    except KeyboardInterrupt as stop:
        marked = leave_interrupted(store, run_record)
        interrupted(stop, f"finished episodes are stored; {'' if marked else STALE}continue with `{resume}`")
        raise typer.Exit(exit_status(stop)) from None
    except DamagedStore:
        raise  # prag writes nothing into a damaged store, not even the run's status
    except Exception as exc:
        marked = leave_interrupted(store, run_record)
        said = exc if isinstance(exc, PragError) else disk_full(exc)
        if said is not None:
            raise PragError(f"{said}\n{interrupted_hint(resume, marked)}") from None
        raise
    summary = [r for r in store_stats(store).rounds if r.run_id == run_record.id]
    with writing(log.directory / "summary.json"):
        (log.directory / "summary.json").write_text(json.dumps(
            [{"round": r.round, "episodes": r.episodes, "won": r.won, "success_rate": r.success_rate} for r in summary],
            indent=2))
    for r in summary:
        console.print(f"round {r.round}: {r.won}/{r.episodes} won ({r.success_rate:.0%})", highlight=False)
    console.print(shown(f"log and summary in {log.directory}; compare rounds with "
                        f"`{command('prag', 'compare', store_path, run_record.id)}`"), highlight=False, soft_wrap=True)


def _where(config: RunConfig) -> str:
    """Where the episodes run, when not one at a time in this process."""
    execution = config.execution
    servers = f" on {len(execution.llm_urls)} servers" if len(execution.llm_urls) > 1 else ""
    if execution.executor == "ray":
        return f"{servers}, {execution.workers} Ray workers{f' at {execution.ray_address}' if execution.ray_address else ''}"
    if execution.workers == 1:
        return servers
    families = {load_spec(s).env for s in filter(None, (config.experiment.spec, config.experiment.train))}
    kinds = sorted({"processes" if executor_name(config, family) == "processes" else "threads" for family in families})
    return f"{servers}, {execution.workers} {' or '.join(kinds)}"


def leave_interrupted(store: Store, run_record: RunRecord) -> bool:
    """Mark a run stopped before its end `interrupted` (its process lets it go); whether it could.
    A store that cannot take the status (damaged, gone, its disk full) shows the run
    `running (stale)` instead, which the messages then say."""
    try:
        store.set_run_status(run_record.id, "interrupted")
    except PragError:
        return False
    return True


class RunDisplay:
    """What a run shows as it goes, and its log: every event goes to runs/<run>/log.jsonl.

    On a terminal, one progress bar per round with the running success rate, and the wait for
    an LLM server in place of it while a call waits. Elsewhere (a file, a pipe), a line per round,
    per episode and per retry of an LLM call, each short enough for 80 columns.
    """

    def __init__(self, log: RunLog, progress: Progress | None, out: Console = console) -> None:
        self.log = log
        self.progress = progress
        self.out = out
        self.bar: TaskID | None = None
        self.round = 0
        self.tasks = self.done = self.won = self.played = 0
        self.status = ""
        self.noted: tuple[int, int] = (0, 0)  # the last wait noted in line mode: (attempt, half-minutes)

    def __call__(self, event: str, data: dict) -> None:
        self.log(event, data)
        if event == "round":
            self.round, self.tasks = data["round"], data["tasks"]
            self.done = data["tasks"] - data["todo"]
            self.won = self.played = 0
            self.status = ""
            if self.progress is not None:
                self.bar = self.progress.add_task(f"round {self.round}", total=self.tasks, completed=self.done, status="")
            else:
                before = f", {self.done} played before" if self.done else ""
                self._line(f"round {self.round} of {data['spec']}: {self.tasks} tasks{before}")
        elif event == "episode":
            self.played += 1
            self.done += 1
            self.won += int(data["won"])
            outcome = f"{'won' if data['won'] else 'lost'} in {data['n_steps']} steps"
            self.status = f"won {self.won}/{self.played} ({self.won / self.played:.0%}), last {outcome}"
            if self.progress is not None and self.bar is not None:
                self.progress.update(self.bar, advance=1, status=self.status)
            else:
                self._line(f"round {self.round} {self.done}/{self.tasks}: {data['task_id']} {outcome} "
                           f"(won {self.won}/{self.played})")

    def waiting(self, seconds: float, attempt: int) -> None:
        """`on_wait` of the run's LLM: the wait for a server, shown while it lasts."""
        if self.progress is not None:
            if self.bar is not None:
                note = f"waiting for the LLM server: {seconds:.0f} s, attempt {attempt}" if attempt else self.status
                self.progress.update(self.bar, status=note)
            return
        noted = (attempt, int(seconds // 30))
        if attempt and noted != self.noted and (attempt > 1 or seconds >= 30):
            self._line(f"waiting for the LLM server: {seconds:.0f} s, attempt {attempt}")
        self.noted = noted

    def _line(self, text: str) -> None:
        self.out.print(shown(text), highlight=False, soft_wrap=True)


@contextlib.contextmanager
def run_display(log: RunLog, out: Console = console) -> Iterator[RunDisplay]:
    """The display of a run on `out`: progress bars on a terminal, lines elsewhere."""
    if not out.is_terminal:
        yield RunDisplay(log, None, out)
        return
    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(bar_width=12),
        MofNCompleteColumn(),
        TextColumn("{task.fields[status]}", markup=False),
        TimeElapsedColumn(),
        console=out,
    )
    with progress:
        yield RunDisplay(log, progress, out)


def _llm_budget(given: str | None, ask: str) -> tuple[int | None, float | None]:
    """`--llm-budget` as the agent's `llm_budget` (calls) and `llm_seconds` (a step): a count, a
    number of seconds (`3s`), `none` (no limit), or left out: DEFAULT_LLM_BUDGET unless the LLM is
    asked every step (P-RAG as published plays without a limit)."""
    text = (DEFAULT_LLM_BUDGET if ask != "always" else "none") if given is None else given.strip().lower()
    if text == "none":
        return None, None
    if text.isdigit():
        return int(text), None
    try:
        seconds = float(text.removesuffix("s")) if text.endswith("s") else -1.0
    except ValueError:
        seconds = -1.0
    if not seconds > 0:
        raise PragError(f"--llm-budget {given!r}: give a number of LLM calls (0 or more), seconds a step (3s), "
                        "or none for no limit")
    return None, seconds


def _run_sources(text: str) -> tuple[str, ...]:
    """`--sources` of a run: as parsed, without a person, who has no way to answer in `prag run`."""
    sources = parse_sources(text)
    if KnowledgeSource.PERSON in sources:
        raise PragError(f"--sources {text!r}: no person answers in `prag run`; drop person, or play with a person in `prag console`")
    return sources
