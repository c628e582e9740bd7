"""`prag query`: the top-K stored episodes and corrections for a goal (and scene graph), where
things of a kind were found, and how words are read into a goal."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.table import Table

from prag.cli import app
from prag.cli.common import StoreArg, console, err_console, guarded
from prag.cli.layout import show
from prag.errors import PragError
from prag.retrieval.corrections import CorrectionHit, CorrectionSource
from prag.retrieval.embed import DEFAULT_MODEL, EmbeddingCache, Encoder
from prag.retrieval.index import ExperienceIndex, Hit, Visibility, check_mode
from prag.store import EpisodeRecord, Store
from prag.text import shown

# What only `query --reading` needs is imported by it (the goal readers, the env registry, the LLM
# backends): a goal's query answers sooner.

ModelOpt = Annotated[str, typer.Option("--model", help="Sentence-embedding model: a name or a local path.")]


@app.command()
@guarded
def query(
    store_path: StoreArg,
    goal: Annotated[Optional[str], typer.Argument(help="Goal instruction to retrieve experience for.")] = None,
    scene: Annotated[Optional[str], typer.Option("--scene", help="Current scene-graph text.")] = None,
    k: Annotated[int, typer.Option("--k", min=1, help="How many episodes to return.")] = 5,
    mode: Annotated[
        Optional[str],
        typer.Option("--mode", help="prag (goal + scene graph), goal, or none. Default: prag with --scene, else goal."),
    ] = None,
    run: Annotated[Optional[str], typer.Option("--run", help="Query as if from this run ...")] = None,
    before_round: Annotated[
        Optional[int],
        typer.Option("--round", min=0, help="... in this round: sees its rounds < ROUND only (default: all it played)."),
    ] = None,
    where: Annotated[
        Optional[str],
        typer.Option("--where", help="Instead of a goal: the kinds of place things of this kind (apple) were found in or on."),
    ] = None,
    reading: Annotated[
        Optional[str],
        typer.Option("--reading", help="Instead of a goal: what prag would read these words as, and why (verified readings, nearest first)."),
    ] = None,
    llm: Annotated[Optional[str], typer.Option("--llm", help="With --reading: let this LLM read the words too (as `prag run --llm`).")] = None,
    room: Annotated[
        Optional[str],
        typer.Option("--room", help="With --reading: the kinds of place in the room, comma-separated (default: any)."),
    ] = None,
    family: Annotated[str, typer.Option("--family", help="With --reading: the env family whose goals the words are read into.")] = "alfworld",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
    model: ModelOpt = DEFAULT_MODEL,
) -> None:
    """Show the top-K corrections and stored episodes for a goal (and scene graph), with their scores;
    or, with --where KIND, where things of that kind were found, by how many episodes saw them there;
    or, with --reading WORDS, how prag reads the words into a goal."""
    chosen = check_mode(mode or ("prag" if scene else "goal"))
    if before_round is not None and run is None:
        raise PragError("--round N asks what round N of a run could see: give the run with --run RUN")
    if [goal, where, reading].count(None) != 2:
        raise PragError(
            "give a GOAL to retrieve experience for, --where KIND to see where things of a kind were found, "
            "or --reading WORDS to see how words are read into a goal (one of them)"
        )
    if where is not None:
        _where(store_path, where, run, before_round, as_json)
        return
    if reading is not None:
        _reading(store_path, reading, ReadingQuery(run, before_round, llm, room, family, model), as_json)
        return
    assert goal is not None
    with Store(store_path, create=False) as store:
        if not store.count("episodes") and not store.count("corrections"):
            raise PragError(f"{store_path} has no episodes yet (and no corrections): fill it with `prag run` or `prag import`")
        visibility = Visibility() if run is None else _seen_by(store, run, before_round)
        cache = EmbeddingCache(store, Encoder(model, quick=True), read_only=True)
        index = ExperienceIndex.from_store(store, cache)
        hits = index.query(
            cache.vector(goal), cache.vector(scene) if scene else None, k=k, mode=chosen, visibility=visibility,
        )
        corrected = CorrectionSource(store, cache, k=k).retrieve([goal], scene if chosen == "prag" else None)
        episodes = [store.episode(hit.episode_id) for hit in hits]
    if as_json:
        console.print_json(
            json.dumps(
                [{"layer": "correction", **_correction_json(h)} for h in corrected]
                + [{"layer": "episode", **_episode_json(hit, e)} for hit, e in zip(hits, episodes)]
            )
        )
        return
    if corrected:
        show(console, _corrections_table(corrected, goal))
    if not hits:
        seen = "" if run is None else f" that round {visibility.before_round} of run {run} sees (its rounds < {visibility.before_round})"
        err_console.print(shown(f"no episodes{seen} in mode {chosen}"), highlight=False, soft_wrap=True)
        return
    table = Table(title=shown(f"top {k} episodes for {goal!r} (mode {chosen})"))
    for column in ("episode", "run", "round", "task type", "goal", "read as", "won", "score", "goal sim", "scene sim", "best t"):
        table.add_column(column, overflow="fold", no_wrap=column in {"run", "task type", "score"})
    for hit, episode in zip(hits, episodes):
        table.add_row(
            str(hit.episode_id),
            shown(episode.run_id),
            str(episode.round),
            shown(episode.task_type),
            shown(episode.goal),
            shown(_read_as(episode)),
            "yes" if episode.won else "no",
            f"{hit.score:.3f}",
            f"{hit.goal_score:.3f}",
            f"{hit.scene_score:.3f}" if hit.best_step is not None else "-",
            str(hit.best_step) if hit.best_step is not None else "-",
        )
    show(console, table)


def _where(store_path: Path, kind: str, run: str | None, before_round: int | None, as_json: bool) -> None:
    """`prag query --where KIND`: the kinds of place things of KIND were seen in or on, best first."""
    with Store(store_path, create=False) as store:
        if not store.count("episodes"):
            raise PragError(f"{store_path} has no episodes yet: fill it with `prag run` or `prag import`")
        visibility = Visibility() if run is None else _seen_by(store, run, before_round)
        ranked = store.places.ranked(kind, visibility)
        known = [] if ranked else [k for k, _ in store.places.kinds(visibility, limit=12)]
    if as_json:
        console.print_json(json.dumps([{"place": place, "episodes": n} for place, n in ranked]))
        return
    scope = "" if run is None else f" that round {visibility.before_round} of run {run} sees"
    if not ranked:
        kinds = f"kinds seen: {', '.join(known)}" if known else "no thing was seen in or on a place"
        err_console.print(shown(f"no {kind} was seen in or on a place in the episodes{scope} ({kinds})"),
                          highlight=False, soft_wrap=True)
        return
    table = Table(title=shown(f"where {kind} was found" + (f" (episodes{scope})" if run else "")))
    for column in ("place", "episodes"):
        table.add_column(column, no_wrap=True)
    for place, n in ranked:
        table.add_row(shown(place), str(n))
    show(console, table)


@dataclass(frozen=True)
class ReadingQuery:
    """`prag query --reading`'s settings: whose view (run, round), the LLM, the room, the family."""

    run: str | None
    before_round: int | None
    llm: str | None
    room: str | None
    family: str
    model: str


def _reading(store_path: Path, words: str, asked: ReadingQuery, as_json: bool) -> None:
    """`prag query --reading WORDS`: the readings the chain gives the words (template, verified
    readings from the store, the kinds the words name, the LLM when asked), best first, with why;
    and every stored reading of these very words."""
    from prag.agent.goals.readers import (
        Context,
        ExperienceReader,
        GoalReader,
        LLMReader,
        TemplateReader,
        WordsReader,
        read,
    )
    from prag.agent.protocol import Usage
    from prag.envs import registry
    from prag.llm import make_llm
    from prag.retrieval.readings import ReadingMemory

    domain = registry.domain(asked.family)
    room = [kind.strip() for kind in (asked.room or "").split(",") if kind.strip()]
    with Store(store_path, create=False) as store:
        visibility = Visibility() if asked.run is None else _seen_by(store, asked.run, asked.before_round)
        recall = ReadingMemory(store, EmbeddingCache(store, Encoder(asked.model, quick=True), read_only=True)).recaller(visibility)
        readers: list[GoalReader] = [TemplateReader(), ExperienceReader(recall), WordsReader(recall)]
        if asked.llm is not None:
            readers.append(LLMReader(make_llm(asked.llm), recall, Usage()))
        readings = read(readers, Context(words, domain, room))
        stored = store.readings.tried(words)
    if as_json:
        console.print_json(json.dumps({"readings": [r.as_dict() for r in readings], "stored": stored}))
        return
    if not readings:
        how = "" if asked.llm else "; add --llm local to let the LLM read them"
        err_console.print(shown(f"no reading of {words!r} from the template, verified readings or the words{how}"),
                          highlight=False, soft_wrap=True)
    else:
        table = Table(title=shown(f"how prag reads {words!r}, best first"))
        for column in ("goal", "reader", "confidence", "why"):
            table.add_column(column, overflow="fold")
        for r in readings:
            table.add_row(shown(r.sentence), r.source, f"{r.confidence:.2f}", shown(r.why))
        show(console, table)
    if stored:
        table = Table(title=shown(f"episodes that read {words!r}"))
        for column in ("episode", "run", "round", "read as", "reader", "verified"):
            table.add_column(column, overflow="fold")
        for row in stored:
            table.add_row(str(row["episode_id"]), shown(row["run_id"]), str(row["round"]), shown(row["sentence"]),
                          row["reader"], "yes" if row["verified"] else "no")
        show(console, table)


def _read_as(episode: EpisodeRecord) -> str:
    """The goal as the episode read it, where it differs from the words given; then the readings it dropped."""
    reading = episode.extra.reading
    dropped = [h.sentence for h in reading.hypotheses if h.dropped] if reading is not None else []
    shown = episode.read_as if episode.read_as != episode.goal else ""
    return "; ".join([shown, *(f"not {d}" for d in dropped if d)]).strip("; ")


def _seen_by(store: Store, run_id: str, before_round: int | None) -> Visibility:
    """What round `before_round` of a run retrieves from (default: a round after all it played);
    an unknown run or a round the run does not have is an error naming those there are."""
    run = store.run(run_id)  # an unknown run: the error names the runs there are
    played = sorted({e.round for e in store.outcomes([run.id])})
    last = max([run.rounds, *(r + 1 for r in played)])  # round `rounds` is a train run's test round
    if before_round is None:
        before_round = last
    elif before_round > last:
        raise PragError(
            f"run {run.id} has no round {before_round}: it plays rounds 0 to {run.rounds - 1}"
            f"{' and the test round ' + str(run.rounds) if run.train_spec() else ''} (played: "
            f"{', '.join(map(str, played)) or 'none'}); give --round from 0 to {last} (round N sees rounds < N)"
        )
    return Visibility(run.id, before_round, tuple(run.include_runs))


def _episode_json(hit: Hit, episode: EpisodeRecord) -> dict:
    return {
        "episode_id": hit.episode_id, "run_id": episode.run_id, "round": episode.round, "task_id": episode.task_id,
        "task_type": episode.task_type, "goal": episode.goal, "won": episode.won, "score": hit.score,
        "goal_score": hit.goal_score, "scene_score": hit.scene_score, "best_step": hit.best_step,
    }


def _correction_json(hit: CorrectionHit) -> dict:
    c = hit.correction
    return {
        "correction_id": c.id, "origin": c.origin, "verified": c.verified, "domain": c.domain,
        "task_type": c.task_type, "goal": c.goal, "score": hit.score,
        "interaction_score": hit.interaction_score, "scene_score": hit.scene_score, "best_step": hit.best_step,
    }


def _corrections_table(hits: list[CorrectionHit], goal: str) -> Table:
    table = Table(title=shown(f"top {len(hits)} corrections by a person for {goal!r} (shown to the agent first)"))
    for column in ("correction", "origin", "verified", "task type", "goal", "score", "instr. sim", "scene sim"):
        table.add_column(column, overflow="fold", no_wrap=column in {"task type", "score"})
    for hit in hits:
        c = hit.correction
        table.add_row(
            str(c.id), shown(c.origin), "yes" if c.verified else "no", shown(c.task_type), shown(c.goal), f"{hit.score:.3f}",
            f"{hit.interaction_score:.3f}", f"{hit.scene_score:.3f}" if hit.best_step is not None else "-",
        )
    return table
