"""`prag correct` (a person corrects an episode) and `prag corrections list/show/delete`."""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Optional

import click
import typer
from rich.table import Table

from prag.cli import app
from prag.cli.common import LLMRetriesOpt, LLMTimeoutOpt, StoreArg, console, guarded
from prag.cli.layout import show
from prag.corrections.given import add_given, reference_transcript, task_ids
from prag.corrections.learn import Outcome, correct_episode
from prag.corrections.replay import Replay
from prag.errors import PragError
from prag.files import read_text
from prag.llm import DEFAULT_RETRIES, DEFAULT_TIMEOUT, SPEC_HELP, make_llm
from prag.retrieval.embed import DEFAULT_MODEL, EmbeddingCache, Encoder
from prag.store import Store
from prag.store.corrections import Correction
from prag.store.transcripts import from_episode, parse
from prag.text import command, shown

EDIT_HEADER = "# Fix the transcript below and save; lines starting with # are ignored.\n"


@app.command()
@guarded
def correct(
    store_path: StoreArg,
    episode_id: Annotated[int, typer.Argument(metavar="EPISODE", help="Id of the episode to correct (see `prag stats` / `prag query`).")],
    feedback: Annotated[Optional[str], typer.Option("--feedback", help="Your feedback, instead of typing it when asked.")] = None,
    edit: Annotated[bool, typer.Option("--edit", help="Fix the transcript yourself in $EDITOR instead of asking the improvement LLM.")] = False,
    llm: Annotated[str, typer.Option("--llm", help=f"Improvement LLM: {SPEC_HELP}.")] = "local",
    keep_unverified: Annotated[
        Optional[bool],
        typer.Option("--keep-unverified/--discard-unverified", help="What to do when the replay does not win (default: ask)."),
    ] = None,
    attempts: Annotated[int, typer.Option("--attempts", min=1, help="Let the improvement LLM try up to N times until its transcript wins the replay.")] = 1,
    model: Annotated[str, typer.Option("--model", help="Sentence-embedding model: a name or a local path.")] = DEFAULT_MODEL,
    llm_timeout: LLMTimeoutOpt = DEFAULT_TIMEOUT,
    llm_retries: LLMRetriesOpt = DEFAULT_RETRIES,
) -> None:
    """Correct an episode: your feedback becomes a replayed, stored transcript the agent sees first.

    The improvement LLM answers three turns (the problem, how to do better, the improved
    transcript); the transcript is replayed from the episode's start and stored verified if it
    wins, else only if you agree.
    """
    with Store(store_path, create=False) as store:
        episode = store.episode(episode_id)
        transcript = from_episode(episode)
        outcome_word = "won" if episode.won else "not won"
        console.print(f"[bold]episode {episode_id}[/] ({shown(episode.task_id)}, {outcome_word} in {episode.n_actions} steps)")
        console.print(shown(transcript.render(), lines=True), highlight=False)
        cache = EmbeddingCache(store, Encoder(model))
        decide = _decider(keep_unverified)
        if edit:
            outcome = _edit(store, episode_id, cache, transcript.render(), feedback or "", decide)
            if outcome is None:
                return
        else:
            said = feedback if feedback is not None else typer.prompt("Your feedback")
            outcome = correct_episode(
                store, episode_id, cache, feedback=said, keep_unverified=decide, attempts=attempts,
                llm=make_llm(llm, timeout=llm_timeout, retries=llm_retries),
            )
    _report(outcome)


def _edit(
    store: Store, episode_id: int, cache: EmbeddingCache, rendered: str, feedback: str, decide: Callable[[Replay], bool]
) -> Outcome | None:
    """The person's edit of the episode's transcript, replayed and stored; None when not saved.

    Until it is stored, the edit is kept beside the store and the next `prag correct --edit` of
    the episode opens it again: an error, or a replay the person would not keep, costs them
    nothing they typed. Errors name the lines of the file the editor showed."""
    kept = store.path.with_name(f"{store.path.name}.edit-{episode_id}.txt")
    again = kept.exists()
    start = kept.read_text(encoding="utf-8") if again else EDIT_HEADER + rendered
    if again:
        console.print(f"going on with your last edit, kept in {shown(str(kept))}")
    try:
        text = click.edit(start, extension=".txt")
    except UnicodeDecodeError as exc:
        raise PragError(f"the edited transcript is not UTF-8 text ({exc.reason} at byte {exc.start}): "
                        "nothing stored; save it as UTF-8 in your editor and correct again") from None
    if text is None:
        console.print("not saved: nothing stored")
        return None
    kept.write_text(text, encoding="utf-8")
    reopen = f"your edit is kept in {kept}; `{command('prag', 'correct', store.path, episode_id, '--edit')}` opens it again"
    try:
        edited = parse(text, comments=True)
        outcome = correct_episode(store, episode_id, cache, feedback=feedback, edited=edited, keep_unverified=decide)
    except PragError as exc:
        raise PragError(f"{exc}\nnothing stored: {reopen}") from None
    if outcome.stored is None:
        console.print(f"{reopen} (delete it to start from the episode)", markup=False, highlight=False)
    else:
        kept.unlink()
    return outcome

def _decider(keep: bool | None) -> Callable[[Replay], bool]:
    def decide(replay: Replay) -> bool:
        console.print(f"[yellow]the replay did not win:[/] {shown(replay.note)}")
        if keep is not None:
            return keep
        return typer.confirm("Store it anyway, as unverified (lower priority)?", default=False)

    return decide


def _report(outcome: Outcome) -> None:
    learning = outcome.learning
    if learning is not None:
        console.print(f"[bold]problem:[/] {shown(learning.problem)}")
        if learning.advice:
            console.print(f"[bold]advice:[/] {shown(learning.advice)}")
    if outcome.replay is not None and outcome.stored is not None:
        console.print("[bold]improved transcript:[/]")
        console.print(shown(outcome.stored.transcript, lines=True), highlight=False)
    console.print(shown(outcome.message, lines=True))


TRANSCRIPT_FILE = "a person's console transcript (UTF-8 text), as `prag corrections show` prints one"

corrections_app = typer.Typer(help="Corrections by a person: add, list, show, delete.", no_args_is_help=True)
app.add_typer(corrections_app, name="corrections")


@corrections_app.command("add")
@guarded
def add_cmd(
    store_path: StoreArg,
    spec: Annotated[str, typer.Argument(help="The task set the tasks come from (a name from `prag envs list` or a .toml path).")],
    task: Annotated[Optional[list[str]], typer.Option("--task", help="A task id of the spec (repeatable; default: every task of the spec).")] = None,
    transcript_file: Annotated[Optional[Path], typer.Option("--transcript", help="A person's console transcript of the task (one --task), as `prag corrections show` prints one.")] = None,
    reference: Annotated[bool, typer.Option("--reference", help="Each task's own reference path (the family's, e.g. ScienceWorld's gold path) as a stand-in for a person's correction; stored with origin 'reference'.")] = False,
    keep_unverified: Annotated[bool, typer.Option("--keep-unverified", help="Store a transcript whose replay does not win, as unverified.")] = False,
) -> None:
    """Add corrections given whole: a person's transcript of a task, or the reference path.

    Each is replayed from the task's start and stored verified if it wins. Its sub-goals (what
    raised the score) then serve the other variations of its task (the progress source).
    """
    if reference == (transcript_file is not None):
        raise PragError("give one of --reference (each task's reference path) or --transcript FILE (a person's)")
    ids = task_ids(spec, task)
    if transcript_file is not None and len(ids) != 1:
        raise PragError("--transcript is the transcript of one task: name it with --task")
    # read as every file a user names is: a device or a pipe refused unread, the size bounded
    given = parse(read_text(transcript_file, TRANSCRIPT_FILE)) if transcript_file is not None else None
    with Store(store_path) as store:
        cache = EmbeddingCache(store, Encoder(DEFAULT_MODEL))
        for task_id in ids:
            transcript = given if given is not None else reference_transcript(spec, task_id)
            outcome = add_given(store, cache, spec, task_id, transcript, "edit" if given is not None else "reference",
                                keep_unverified)
            console.print(shown(outcome.message, lines=True), highlight=False)


@corrections_app.command("list")
@guarded
def list_cmd(
    store_path: StoreArg,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """The corrections in a store, prior transcripts included."""
    with Store(store_path, create=False) as store:
        found = store.corrections.list()
    if as_json:
        console.print_json(json.dumps([_summary(c) for c in found]))
        return
    table = Table(title=f"corrections in {shown(str(store_path))}")
    for column in ("id", "origin", "verified", "domain", "task type", "goal", "episode", "model", "created"):
        table.add_column(column, overflow="fold")
    for c in found:
        table.add_row(
            str(c.id), shown(c.origin), "yes" if c.verified else "no", shown(c.domain), shown(c.task_type),
            shown(c.goal), str(c.source_episode or "-"), shown(c.improvement_model), shown(c.created_at),
        )
    show(console, table)


@corrections_app.command("show")
@guarded
def show_cmd(
    store_path: StoreArg,
    correction_id: Annotated[int, typer.Argument(metavar="ID", help="Correction id (see `prag corrections list`).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """One correction with its provenance: feedback, the three answers, replay, transcript."""
    with Store(store_path, create=False) as store:
        c = store.corrections.get(correction_id)
    if as_json:
        console.print_json(json.dumps(c.to_dict()))
        return
    fields = [
        ("origin", c.origin + (f" ({c.name})" if c.name else "")),
        ("task", f"{c.task_id} ({c.task_type}) of {c.spec}"),
        ("goal", c.goal),
        ("instructions", " | ".join(c.instructions)),
        ("source episode", str(c.source_episode or "-")),
        ("feedback", c.feedback or "-"),
        ("improvement model", c.improvement_model or "-"),
        ("problem", c.problem or "-"),
        ("advice", c.advice or "-"),
        ("verified", f"{'yes' if c.verified else 'no'}: {c.verify_note}"),
        ("created", c.created_at),
    ]
    for key, value in fields:
        console.print(f"[bold]{key}:[/] {shown(value)}", highlight=False)
    console.print("[bold]transcript:[/]")
    console.print(shown(c.transcript, lines=True), highlight=False)


@corrections_app.command("delete")
@guarded
def delete_cmd(
    store_path: StoreArg,
    correction_id: Annotated[int, typer.Argument(metavar="ID", help="Correction id (see `prag corrections list`).")],
) -> None:
    """Delete a correction for good (prior transcripts too: they are not loaded again)."""
    with Store(store_path, create=False) as store:
        gone = store.corrections.delete(correction_id)
    console.print(f"deleted correction {gone.id} ({shown(gone.origin)}, {shown(gone.goal)})", highlight=False)


def _summary(c: Correction) -> dict[str, Any]:
    return {
        key: value
        for key, value in c.to_dict().items()
        if key not in {"transcript", "input_transcript", "answer", "scenes", "steps"}
    }
