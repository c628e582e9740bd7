"""Export and import of a store as JSON Lines (format and checks: `prag.store.lines`), lossless.

An export holds the runs with their episodes (steps and vectors), then the corrections (with
their vectors), the record of prior transcripts loaded and the learned ask policies; exporting
one run (`run_id`) holds that run and its episodes only. Importing the export into an empty store
and exporting again gives the same lines.

An import reads its input twice. First every line is checked, against the format and against
the other lines and the store: vectors of one model all of one size (the store's, or else the
size most of the file's vectors have), a correction's episode in the file or the store, an
episode's run line not bad. With any bad line nothing is imported, unless `skip_bad` asks to
import the good lines (an episode whose run line is bad counts as bad). Then the good lines are
written in one transaction. An episode whose run has no run line gets a placeholder run;
`embeddings` are optional (missing vectors are encoded when first retrieved). Whatever is
already in the store (an episode with the same run, round, task and source; the same
correction; a prior load of the same name) is skipped, so importing twice changes nothing.
"""
from __future__ import annotations

import base64
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TextIO

from prag.errors import PragError
from prag.files import checked_file
from prag.store.action_models import ActionModelRecord
from prag.store.ask_policies import AskPolicyRecord
from prag.store.corrections import Correction, PriorLoad, correction_texts
from prag.store.database import Store
from prag.store.lines import (
    LINE_BYTES,
    BadLine,
    EpisodeKey,
    Line,
    encode,
    parse_line,
    read_json,
    read_lines,
    said,
    utf8_line,
)
from prag.store.records import EpisodeRecord, RunRecord, text_hash

SHOWN_BAD_LINES = 20


def export_lines(store: Store, run_id: str | None = None) -> Iterator[str]:
    """The store (or one run of it) as JSON Lines."""
    models = store.embedding_models()

    def vectors(texts: list[str]) -> dict:
        hashes = {text_hash(text) for text in texts}
        return {model: store.vectors(model, hashes) for model in models}

    runs = [store.run(run_id)] if run_id else store.runs()
    for run in runs:
        yield encode("run", run.to_dict())
        for episode in store.episodes(run.id):
            data = {key: value for key, value in episode.to_dict().items() if key not in {"id", "n_actions"}}
            yield encode("episode", data, vectors([episode.goal] + [step.scene for step in episode.steps]))
    if run_id is not None:
        return
    for correction in store.corrections.list():
        data = correction.to_dict()
        data.pop("id")
        source = correction.source_episode
        data["source_episode"] = None if source is None else asdict(EpisodeKey.of(store.episode(source)))
        yield encode("correction", data, vectors(correction_texts(correction)))
    for load in store.corrections.prior_loads():
        yield encode("prior_load", asdict(load))
    for policy in store.ask_policies.list():
        data = asdict(policy)
        data.pop("id")
        data.pop("version")  # the importing store numbers it after its own of that name
        data["model"] = base64.b64encode(policy.model).decode("ascii")
        yield encode("ask_policy", data)
    for learned in store.action_models.list():
        data = asdict(learned)
        data.pop("id")
        data.pop("version")  # the importing store numbers it after its own of that family
        yield encode("action_model", data)


def write_export(store: Store, out: TextIO, run_id: str | None = None) -> int:
    """Write the export to `out`; returns the number of lines."""
    count = 0
    for line in export_lines(store, run_id):
        out.write(line + "\n")
        count += 1
    return count


@dataclass
class ImportResult:
    """What an import wrote, skipped as already stored, and (with `skip_bad`) left out as bad."""

    runs: int = 0
    episodes: int = 0
    corrections: int = 0
    prior_loads: int = 0
    ask_policies: int = 0
    action_models: int = 0
    skipped: int = 0
    bad: list[str] = field(default_factory=list)  # "file:line: what is wrong"


JSONL = "a JSON Lines file written by `prag export`"


def import_file(store: Store, path: str | Path, *, skip_bad: bool = False, name: str | None = None) -> ImportResult:
    """Import a JSON Lines file written by `prag export` (`name` names it in messages). Its lines
    are read as bytes: a line that is not UTF-8 is a bad line, and a file whose first line is
    not UTF-8 is no export at all (a binary file), refused before it is read through."""
    checked = checked_file(path, JSONL)
    name = name or str(path)
    with open(checked, "rb") as handle:
        first = next((line for line in read_lines(handle) if line.strip()), b"")
    try:
        if len(first) <= LINE_BYTES + 1:  # a longer one was cut, maybe within a letter: the survey refuses it
            utf8_line(first)
    except BadLine as exc:
        raise PragError(f"{name} is not {JSONL}: its first line is {exc}") from None

    def read() -> Iterator[bytes]:
        with open(checked, "rb") as handle:
            yield from read_lines(handle)

    return _import(store, read, name, skip_bad)


def import_lines(
    store: Store, lines: Sequence[str], source_name: str = "<input>", *, skip_bad: bool = False
) -> ImportResult:
    """Import lines already in memory (`source_name` names them in messages)."""
    return _import(store, lambda: lines, source_name, skip_bad)


@dataclass
class _Survey:
    """What the first pass learns of a file: its bad lines, and what good lines define and use."""

    bad: dict[int, str] = field(default_factory=dict)
    dims: dict[int, dict[str, set[int]]] = field(default_factory=dict)  # line -> model -> vector sizes
    run_lines: dict[str, int] = field(default_factory=dict)  # run id -> line of its run line
    bad_runs: dict[str, int] = field(default_factory=dict)  # run id -> its bad run line
    episode_runs: dict[int, str] = field(default_factory=dict)  # episode line -> its run id
    episodes: dict[EpisodeKey, int] = field(default_factory=dict)
    sources: dict[int, EpisodeKey] = field(default_factory=dict)  # correction line -> its episode


def _survey(store: Store, read: Callable[[], Iterable[str | bytes]]) -> _Survey:
    found = _Survey()
    for number, text in enumerate(read(), start=1):
        if not text.strip():
            continue
        try:
            line = parse_line(text)
        except BadLine as exc:
            found.bad[number] = str(exc)
            run_id = _run_id_of_bad_run_line(text)
            if run_id is not None:
                found.bad_runs.setdefault(run_id, number)
            continue
        found.dims[number] = line.dims
        if isinstance(line.record, RunRecord):
            found.run_lines.setdefault(line.record.id, number)
        elif isinstance(line.record, EpisodeRecord):
            found.episode_runs[number] = line.record.run_id
            found.episodes.setdefault(EpisodeKey.of(line.record), number)
        elif line.source_episode is not None:
            found.sources[number] = line.source_episode
    # Vector sizes: the store's for a model it has, else the size most of the file's vectors have.
    sizes: dict[str, Counter[int]] = {}
    for dims in found.dims.values():
        for model, line_sizes in dims.items():
            sizes.setdefault(model, Counter()).update(line_sizes)
    expected = {model: counts.most_common(1)[0][0] for model, counts in sizes.items()}
    stored = store.vector_dims()
    expected.update({model: dim for model, dim in stored.items() if model in expected})
    for number, dims in found.dims.items():
        for model, line_sizes in dims.items():
            wrong = sorted(line_sizes - {expected[model]})
            if wrong:
                whose = "this store's" if model in stored else "most of this file's"
                found.bad[number] = (
                    f"embeddings.{model}: vectors of {' and '.join(map(str, wrong))} numbers, but {whose} "
                    f"vectors of that model have {expected[model]}"
                )
    for number, run_id in found.episode_runs.items():
        if run_id in found.bad_runs and run_id not in found.run_lines and number not in found.bad:
            found.bad[number] = f"its run {said(run_id)} is on bad line {found.bad_runs[run_id]}"
    good_episodes = {key for key, number in found.episodes.items() if number not in found.bad}
    for number, key in found.sources.items():
        if number not in found.bad and key not in good_episodes and _stored_id(store, key) is None:
            found.bad[number] = f"source_episode: {key.describe()} is neither a good line of this file nor in the store"
    return found


def _run_id_of_bad_run_line(text: str | bytes) -> str | None:
    """The id a bad run line gives, if it gives one (its episodes are then bad too)."""
    try:
        data = read_json(text)
    except BadLine:
        return None
    if isinstance(data, dict) and data.get("kind") == "run" and isinstance(data.get("id"), str):
        return data["id"]
    return None


def _import(store: Store, read: Callable[[], Iterable[str | bytes]], name: str, skip_bad: bool) -> ImportResult:
    survey = _survey(store, read)
    bad = [f"{name}:{number}: {problem}" for number, problem in sorted(survey.bad.items())]
    if bad and not skip_bad:
        shown = "\n".join(bad[:SHOWN_BAD_LINES])
        more = f"\n… and {len(bad) - SHOWN_BAD_LINES} more" if len(bad) > SHOWN_BAD_LINES else ""
        raise PragError(
            f"{len(bad)} bad line{'s' if len(bad) > 1 else ''} in {name}; nothing was imported:\n{shown}{more}\n"
            "fix them, or import the good lines only with --skip-bad"
        )
    result = ImportResult(bad=bad)
    known_runs = {run.id for run in store.runs()}
    with store.transaction():
        for number, text in enumerate(read(), start=1):
            if text.strip() and number not in survey.bad:
                _write(store, parse_line(text), known_runs, result)
    return result


def _write(store: Store, line: Line, known_runs: set[str], result: ImportResult) -> None:
    record = line.record
    if isinstance(record, RunRecord):
        if record.id not in known_runs:
            store.add_run(record, claim=False)
            known_runs.add(record.id)
            result.runs += 1
    elif isinstance(record, EpisodeRecord):
        if record.run_id not in known_runs:
            placeholder = RunRecord(id=record.run_id, spec="imported", llm="unknown", mode="unknown", k=0,
                                    rounds=0, status="finished")
            store.add_run(placeholder, claim=False)
            known_runs.add(record.run_id)
            result.runs += 1
        if store.has_episode(record.run_id, record.round, record.task_id, record.source):
            result.skipped += 1
            return
        _add_vectors(store, line)
        store.add_episode(record)
        result.episodes += 1
    elif isinstance(record, Correction):
        if line.source_episode is not None:
            record.source_episode = _stored_id(store, line.source_episode)
        if store.corrections.find(record) is not None:
            result.skipped += 1
            return
        _add_vectors(store, line)
        store.corrections.add(record)
        result.corrections += 1
    elif isinstance(record, PriorLoad):
        if store.corrections.add_prior_load(record):
            result.prior_loads += 1
        else:
            result.skipped += 1
    elif isinstance(record, AskPolicyRecord | ActionModelRecord):
        # Versioned by name (family): an import adds the next version, unless it is one already stored.
        table = store.ask_policies if isinstance(record, AskPolicyRecord) else store.action_models
        counted = "ask_policies" if isinstance(record, AskPolicyRecord) else "action_models"
        if table.find(record) is not None:  # type: ignore[arg-type]
            result.skipped += 1
            return
        table.add(record)  # type: ignore[arg-type]
        setattr(result, counted, getattr(result, counted) + 1)


def _stored_id(store: Store, key: EpisodeKey) -> int | None:
    return store.episode_id(key.run_id, key.round, key.task_id, key.source)


def _add_vectors(store: Store, line: Line) -> None:
    for model, vectors in line.embeddings.items():
        store.add_vectors(model, vectors)
