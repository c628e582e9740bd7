"""Export and import of episodes as JSON Lines, lossless.

Each line is one object with a `kind`:

    {"kind": "run", ...RunRecord fields}
    {"kind": "episode", ...EpisodeRecord fields, "embeddings": {model: {hash: base64 float32}}}

A run line comes before the first episode of that run. On import an episode whose run has
no run line gets a placeholder run; `embeddings` is optional (missing vectors are encoded
when the episodes are first retrieved). Episodes already in the store (same run, round,
task and source) are skipped, so importing twice changes nothing.
"""
from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TextIO

import numpy as np

from prag.errors import PragError
from prag.store import Store
from prag.store.records import EpisodeRecord, RunRecord, text_hash


def export_lines(store: Store, run_id: str | None = None) -> Iterator[str]:
    runs = [store.run(run_id)] if run_id else store.runs()
    for run in runs:
        yield json.dumps({"kind": "run", **run.to_dict()}, sort_keys=True)
        for episode in store.episodes(run.id):
            data = episode.to_dict()
            data.pop("id")
            hashes = {text_hash(episode.goal)} | {text_hash(step.scene) for step in episode.steps}
            data["embeddings"] = {
                model: {h: _b64(v) for h, v in sorted(store.vectors(model, hashes).items())}
                for model in store.embedding_models()
            }
            yield json.dumps({"kind": "episode", **data}, sort_keys=True)


@dataclass
class ImportResult:
    runs: int = 0
    episodes: int = 0
    skipped: int = 0


def import_lines(store: Store, lines: Iterable[str], source_name: str = "<input>") -> ImportResult:
    result = ImportResult()
    known_runs = {run.id for run in store.runs()}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{source_name}:{number}"
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise PragError(f"{where}: not a JSON line ({exc.msg}); nothing after line {number - 1} imported") from None
        kind = data.pop("kind", "episode") if isinstance(data, dict) else None
        if kind == "run":
            run = _record(RunRecord, data, where)
            if run.id not in known_runs:
                store.add_run(run)
                known_runs.add(run.id)
                result.runs += 1
        elif kind == "episode":
            embeddings = data.pop("embeddings", {})
            episode = _record(EpisodeRecord, data, where)
            if episode.run_id not in known_runs:
                store.add_run(RunRecord(id=episode.run_id, spec="imported", llm="unknown", mode="unknown", k=0, rounds=0, status="finished"))
                known_runs.add(episode.run_id)
                result.runs += 1
            if store.has_episode(episode.run_id, episode.round, episode.task_id, episode.source):
                result.skipped += 1
                continue
            for model, vectors in embeddings.items():
                store.add_vectors(model, {h: _unb64(v) for h, v in vectors.items()})
            store.add_episode(episode)
            result.episodes += 1
        else:
            raise PragError(f"{where}: unknown kind {kind!r}; expected 'run' or 'episode'")
    return result


def write_export(store: Store, out: TextIO, run_id: str | None = None) -> int:
    count = 0
    for line in export_lines(store, run_id):
        out.write(line + "\n")
        count += 1
    return count


def _record(cls: type, data: dict[str, Any], where: str) -> Any:
    try:
        return cls.from_dict(data) if cls is EpisodeRecord else cls(**data)
    except TypeError as exc:
        raise PragError(f"{where}: not a valid {cls.__name__} ({exc})") from None


def _b64(vector: np.ndarray) -> str:
    return base64.b64encode(np.asarray(vector, dtype=np.float32).tobytes()).decode("ascii")


def _unb64(text: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype=np.float32)
