"""`prag console`: watch the agent play one task step by step, speak to it, and teach it.

Before every action the person may type: an empty line lets the agent take its next action;
any other text is said to the agent (it enters the history as an utterance the agent must take
into account); `go` lets the agent play on to the end, still asking what it would ask; `learn`
ends the episode and learns from it; `quit` ends it. With confirmation on (Soar ITL's yes/no), every action the LLM proposes is shown first: y (or Enter) takes it, n
rejects it and the LLM is asked again, other text is an instruction instead; after three
rejections the agent asks for the step in words (an admissible action is taken as typed).
Steps from a plan or from search are not confirmed. At the end the person's effort is shown:
instructions, words, yes/no answers. After the episode, typed text is feedback, and `learn`
turns the feedback into a correction (learn_from_interaction, replay, store). Lines come from
standard input, so a session can be scripted.
"""
from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console

from prag.agent.agent import PragAgent, parse_readers, parse_sources
from prag.agent.config import AgentConfig
from prag.agent.protocol import Agent
from prag.agent.sources.chain import source_names
from prag.agent.world.places import parse_places
from prag.cli import app
from prag.cli.common import (
    LLMRetriesOpt,
    LLMTimeoutOpt,
    check_llm,
    console,
    guarded,
    injected_llm,
    sources_help,
    task_at,
)
from prag.cli.run_cmd import DEFAULT, DEFAULT_STORE, READERS_HELP, leave_interrupted
from prag.corrections.learn import Outcome, correct_episode
from prag.corrections.replay import Replay
from prag.envs.base import Observation
from prag.envs.spec import load_spec
from prag.llm import LLM, SPEC_HELP
from prag.retrieval.embed import EmbeddingCache, Encoder
from prag.run.config import (
    ExecutionConfig,
    ExperimentConfig,
    RetrievalConfig,
    RunConfig,
)
from prag.run.runner import Phase, Runner, build_llm, check_playable, start_run
from prag.store import Store
from prag.store.records import StepRecord
from prag.store.transcripts import Entry, statement
from prag.text import shown

LEARN, QUIT, GO = "learn", "quit", "go"
ReadLine = Callable[[str], Optional[str]]  # shows a prompt, returns the line (None at end of input)
YES, NO = {"", "y", "yes"}, {"n", "no"}


def stdin_line(prompt: str) -> str | None:
    console.print(prompt, end="")
    line = sys.stdin.readline()
    return line.rstrip("\n") if line else None


class ConsolePerson:
    """The console's user as the agent's person (`prag.agent.person.Person`): yes, no or words
    for each proposal; words when the agent asks. End of input is a yes, then the episode ends."""

    def __init__(self, read_line: ReadLine) -> None:
        self.read_line = read_line

    def confirm(self, action: str, observation: Observation) -> bool | str:
        line = self.read_line(shown(f"The agent proposes: {action}. OK? [y/n, or type an instruction] "))
        answer = " ".join((line or "").split())
        if line is None or answer.lower() in YES:
            return True
        return False if answer.lower() in NO else answer

    def confirm_reading(self, instruction: str, sentence: str | None) -> bool | str:
        if sentence is None:
            line = self.read_line(shown(f"The agent cannot read {instruction!r} as a goal. Say it as one: "))
            return " ".join((line or "").split()) or False
        # The reading is asked before the goal is shown as an utterance: name the words read, or
        # the person cannot tell whether the reading is right.
        line = self.read_line(shown(f"I read {instruction!r} as: {sentence}. Right? [y/n, or type the goal in words] "))
        answer = " ".join((line or "").split())
        if line is None or answer.lower() in YES:
            return True
        return False if answer.lower() in NO else answer

    def instruct(self, observation: Observation) -> str | None:
        line = self.read_line("The agent asks: what should it do next? (an action, or tell it something) ")
        if line is None:
            return None
        return " ".join(line.split()) or None


class ConsoleSession:
    """One task played by the agent under a person's eyes, stored as a run of its own.

    `config` names the LLM and encoder the runner builds; `llm` and `encoder` stand in for them
    (tests). The improvement LLM for `learn` is `improver`, by default the agent's own. With
    `confirm`, the person says yes or no to each action the LLM proposes.
    """

    def __init__(
        self,
        store: Store,
        config: RunConfig,
        task_index: int,
        *,
        llm: LLM | None = None,
        encoder: Encoder | None = None,
        improver: LLM | None = None,
        read_line: ReadLine = stdin_line,
        out: Console = console,
        confirm: bool = True,
    ) -> None:
        self.store = store
        self.spec = load_spec(config.experiment.spec)
        self.source = self.spec.open(max_steps=config.experiment.max_steps)
        self.task = task_at(self.spec.name, self.source.tasks(), task_index)
        self.config = config
        self.llm = llm
        self.encoder = encoder
        self.improver = improver
        self.read_line = read_line
        self.out = out
        self.person = ConsolePerson(read_line) if confirm else None
        self.learn_now = False
        self.going = False  # `go` was typed: the agent plays on without an Enter a step
        self.feedback: list[str] = []

    def run(self) -> Outcome | None:
        stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S-%f")
        run = start_run(self.store, self.config, f"console-{self.spec.name}-{stamp}")
        runner = Runner(self.store, run, self.config, llm=self.llm, encoder=self.encoder, person=self.person)
        self.out.print(
            f"[bold]{shown(self.spec.name)}[/] task {shown(self.task.task_id)}: press Enter for the agent's "
            f"next action, type text to tell it something, `{LEARN}` to learn, `{QUIT}` to stop."
        )
        try:
            record = runner.play_one(Phase(0, self.spec, [self.task], self.source), self.task, self._before_act)
        except BaseException:  # Ctrl-C, SIGTERM or SIGHUP (prag.signals), an LLM that stopped answering
            leave_interrupted(self.store, run)
            raise
        self.store.set_run_status(run.id, "finished")
        last = record.steps[-1]
        if last.action is not None:
            self._show(Entry.action(last.action, last.observation))
        self.out.print(f"[bold]{'won' if record.won else 'not won'}[/] after {record.n_actions} actions (episode {record.id})")
        effort = record.extra.effort
        self.out.print(
            f"your effort: {effort.instructions} instructions ({effort.words} words), {effort.answers} yes/no answers"
        )
        if not self.learn_now and not self._after():
            return None
        assert record.id is not None
        outcome = correct_episode(
            self.store, record.id, EmbeddingCache(self.store, runner.encoder),
            feedback=" ".join(self.feedback), llm=self.improver or runner.llm, keep_unverified=self._keep_unverified,
        )
        if outcome.learning is not None and outcome.learning.problem:
            self.out.print(f"[bold]problem:[/] {shown(outcome.learning.problem)}")
            self.out.print(f"[bold]advice:[/] {shown(outcome.learning.advice)}")
        self.out.print(shown(outcome.message, lines=True))
        return outcome

    def _before_act(self, step: StepRecord, observation: Observation, agent: Agent) -> bool:
        if step.action is None:
            self._show(Entry.utterance(observation.goal))
            self._show(Entry("observe", (), observation.text))
        else:
            self._show(Entry.action(step.action, step.observation))
        # An Enter a step is 50 keystrokes for a 50-step game that needs nothing from the person;
        # after `go` the agent plays on, still asking the person what it would have asked.
        if self.going:
            return True
        while True:
            line = self.read_line(f"[dim](Enter: next action; `{GO}`: play on to the end; text: say it; `{LEARN}`; `{QUIT}`)[/] ")
            if line is None or line.strip() == QUIT:
                return False
            if line.strip() == LEARN:
                self.learn_now = True
                return False
            if line.strip() == GO:
                self.going = True
                return True
            if not line.strip():
                return True
            assert isinstance(agent, PragAgent)  # the runner plays the P-RAG agent, which hears
            agent.hear(line)
            self._show(Entry.utterance(" ".join(line.split())))

    def _after(self) -> bool:
        """Feedback after the episode; True when the person asks to learn."""
        while True:
            line = self.read_line(f"[dim](your feedback; `{LEARN}` to learn from it; `{QUIT}` to stop)[/] ")
            if line is None or line.strip() == QUIT:
                return False
            if line.strip() == LEARN:
                return True
            if line.strip():
                self.feedback.append(" ".join(line.split()))
                self._show(Entry.utterance(self.feedback[-1]))

    def _keep_unverified(self, replay: Replay) -> bool:
        self.out.print(f"[yellow]the replay did not win:[/] {shown(replay.note)}")
        answer = self.read_line("Store it anyway, as unverified (lower priority)? [y/N] ")
        return (answer or "").strip().lower() in {"y", "yes"}

    def _show(self, entry: Entry) -> None:
        self.out.print(shown(">>> " + statement(entry)), highlight=False)
        if entry.is_utterance:
            self.out.print(shown(repr({"type": "dialog", "text": entry.result})), highlight=False)
        elif entry.result:
            self.out.print(shown(entry.result, lines=True), highlight=False)


@app.command("console")
@guarded
def console_cmd(
    spec_name: Annotated[str, typer.Argument(metavar="SPEC", help="A spec name from `prag envs list`, or a .toml path.")],
    task: Annotated[int, typer.Option("--task", min=0, help="Index of the task in the spec's task list.")] = 0,
    store_path: Annotated[Path, typer.Option("--store", help="Store the episode and corrections go to (created if missing).")] = DEFAULT_STORE,
    llm: Annotated[str, typer.Option("--llm", help=SPEC_HELP)] = DEFAULT.experiment.llm,
    improver: Annotated[Optional[str], typer.Option("--improver", help="Improvement LLM for `learn` (default: the --llm model).")] = None,
    k: Annotated[int, typer.Option("--k", min=0, help="Episodes retrieved into the prompt.")] = DEFAULT.retrieval.k,
    corrections_k: Annotated[int, typer.Option("--corrections-k", min=0, help="Corrections retrieved into the prompt.")] = DEFAULT.retrieval.corrections_k,
    prior: Annotated[bool, typer.Option("--prior/--no-prior", help="Use the human-written transcripts shipped with prag.")] = DEFAULT.retrieval.prior,
    max_steps: Annotated[Optional[int], typer.Option("--max-steps", min=1, help="Step cap (default: the spec's).")] = None,
    model: Annotated[str, typer.Option("--model", help="Sentence-embedding model: a name or a local path.")] = DEFAULT.retrieval.embedding_model,
    llm_timeout: LLMTimeoutOpt = DEFAULT.execution.llm_timeout,
    llm_retries: LLMRetriesOpt = DEFAULT.execution.llm_retries,
    # On by default: a person at the console is who the yes/no is for (Soar ITL: with it, all tasks
    # were completed with half the words of instruction alone), and Enter is a yes.
    confirm: Annotated[bool, typer.Option("--confirm/--no-confirm", help="Say yes or no to each action the LLM proposes (Enter: yes).")] = True,
    # P-RAG's defaults, so that the person sees the LLM choose every step; the whole chain on request.
    ask: Annotated[str, typer.Option("--ask", help="When to ask the LLM: always, hard-coded, random or learned (as in `prag run`).")] = AgentConfig.ask,
    asker: Annotated[Optional[str], typer.Option("--asker", help="With --ask learned: the stored policy, NAME or NAME:VERSION.")] = None,
    sources: Annotated[str, typer.Option("--sources", help=f"Where steps come from, comma-separated, tried in this order each step: {sources_help(source_names())}.")] = ",".join(AgentConfig.sources),
    readers: Annotated[str, typer.Option("--readers", help=READERS_HELP)] = ",".join(AgentConfig.readers),
    places: Annotated[str, typer.Option("--places", help="Where the search for a thing the goal needs looks first (with search among --sources), comma-separated: memory (where the store saw such things, in earlier rounds), llm (the LLM's guess, for kinds the memory never saw: one call per kind), rules (the family's placement table); they take precedence in that order, whatever the order given. '' for none: places as listed.")] = ",".join(AgentConfig.places),
    action_model: Annotated[str, typer.Option("--action-model", help="What means-ends search (with search among --sources) plans with: given (the family's written model; the one learned from the store where it has none) or learned (the model learned from the episodes this round may see: SAM, `prag model`).")] = AgentConfig.action_model,
) -> None:
    """Watch the agent play a task step by step; tell it things as it goes; `learn` at the end."""
    config = RunConfig(
        ExperimentConfig(spec=spec_name, rounds=1, llm=llm, max_steps=max_steps),
        RetrievalConfig(k=k, embedding_model=model, corrections_k=corrections_k, prior=prior),
        AgentConfig(ask=ask, asker=asker, sources=parse_sources(sources), readers=parse_readers(readers),
                    places=parse_places(places), action_model=action_model),
        execution=ExecutionConfig(llm_timeout=llm_timeout, llm_retries=llm_retries),
    )
    # Everything is checked before the store is created: the options, the spec, the task.
    check_playable(config)
    task_at(spec_name, load_spec(spec_name).open(max_steps=max_steps).tasks(), task)
    for name in {llm, improver or llm}:
        check_llm(name, config.execution)
    with Store(store_path) as store:
        # One round of one task that sees every episode already in the store, and all corrections.
        seen = replace(config.retrieval, include_runs=tuple(run.id for run in store.runs()))
        config = replace(config, retrieval=seen)
        improvement = None
        if improver and improver != llm:
            improvement = injected_llm(improver) or build_llm(improver, config.execution)
        ConsoleSession(store, config, task, llm=injected_llm(llm), improver=improvement, confirm=confirm).run()
