"""Prior knowledge: human-written console transcripts shipped with prag, the first corrections layer.

As the interaction-learning paper starts its memory with hand-written examples, prag ships a few
transcripts written by people for this project, in `prag/data/prior/`:

    prag/data/prior/<set>.toml          a task-set spec of prag's own generated games or houses
                                        (other seeds and room sizes than any evaluation set)
    prag/data/prior/<set>/<task id>.txt one console transcript per task of that set

Loading replays each transcript on its task (`prag.corrections.replay`): it is stored verified only if it
wins, with the scene graphs of the replay for retrieval. Each one is loaded into a store once,
even by runs starting at once: the replays run outside the store's write lock (they take
seconds), and each transcript is stored under it only if no process stored it meanwhile
(`Corrections.add_prior`). A deleted prior transcript stays deleted.
"""
from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass
from importlib import resources
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import numpy as np

from prag.corrections.replay import open_task, replay
from prag.envs import registry
from prag.envs.spec import load_spec
from prag.files import read_text
from prag.paths import cache_dir, write_whole
from prag.retrieval.embed import EmbeddingCache
from prag.store import Store
from prag.store.corrections import Correction, correction_texts
from prag.store.records import text_hash
from prag.store.transcripts import Transcript, parse


@dataclass(frozen=True)
class PriorTranscript:
    """A shipped transcript: its name, the spec of its task set, its task and its text."""

    name: str  # "<set>/<task id>"
    spec_path: Path
    task_id: str
    text: str

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


def prior_dir() -> Path:
    """Where the shipped prior transcripts are."""
    return Path(str(resources.files("prag"))) / "data" / "prior"


def prior_transcripts(directory: Path | None = None) -> list[PriorTranscript]:
    """Every shipped transcript, by set and task id."""
    root = directory or prior_dir()
    found = []
    for spec_path in sorted(root.glob("*.toml")):
        for path in sorted((root / spec_path.stem).glob("*.txt")):
            found.append(PriorTranscript(f"{spec_path.stem}/{path.stem}", spec_path, path.stem,
                                         read_text(path, "a prior transcript (UTF-8 text)")))
    return found


def load_prior(
    store: Store, cache: EmbeddingCache, *, domain: str | None = None, directory: Path | None = None
) -> list[Correction]:
    """Load the prior transcripts of `domain` (all when None) never loaded into this store before."""
    done = {load.name for load in store.corrections.prior_loads()}
    loaded = []
    for prior in prior_transcripts(directory):
        if prior.name in done:
            continue
        spec = load_spec(str(prior.spec_path))
        if domain is not None and registry.domain(spec.env).name != domain:
            continue
        transcript = parse(prior.text)
        key = _replay_key(prior)
        replayed = replayed_prior(prior, transcript, key)
        correction = Correction(
            origin="prior",
            domain=registry.domain(spec.env).name,
            goal=transcript.goal,
            instructions=list(dict.fromkeys(transcript.instructions)),
            transcript=replayed["transcript"],
            verified=replayed["won"],
            verify_note=replayed["note"],
            scenes=replayed["scenes"],
            spec=str(prior.spec_path),
            task_id=replayed["task_id"],
            task_type=replayed["task_type"],
            name=prior.name,
            improvement_model="person",
            input_transcript=prior.text,
        )
        _kept_vectors(cache, key, correction_texts(correction))
        if store.corrections.add_prior(correction, prior.digest):
            loaded.append(correction)
    return loaded


def _replay_key(prior: PriorTranscript) -> str:
    """The digest of what a replay's outcome depends on: the transcript, its spec, the engines."""
    return hashlib.sha256("\n".join([
        prior.digest, prior.spec_path.read_text(encoding="utf-8"),
        *(f"{name} {_installed(name)}" for name in ("prag", "alfworld", "textworld", "minigrid")),
    ]).encode("utf-8")).hexdigest()


def _kept_vectors(cache: EmbeddingCache, key: str, texts: list[str]) -> None:
    """Put the vectors of a prior transcript's texts into the store: from the user cache when
    they were encoded before (a new store then starts without loading the encoder), else encoded
    and kept there."""
    path = cache_dir() / "prior-replays" / f"{key}.{text_hash(cache.encoder.name)[:16]}.npz"
    hashes = [text_hash(text) for text in texts]
    try:
        with np.load(path) as kept:
            if all(h in kept.files for h in hashes):
                cache.store.add_vectors(cache.encoder.name, {h: kept[h] for h in hashes})
                return
    except (OSError, ValueError):
        pass  # never encoded here, or a damaged file: encode again
    vectors = io.BytesIO()
    np.savez(vectors, **dict(zip(hashes, cache.vectors(texts))))
    write_whole(path, vectors.getvalue())


def replayed_prior(prior: PriorTranscript, transcript: Transcript, key: str) -> dict[str, Any]:
    """The replay of a shipped transcript on its task: what the store keeps of it.

    A replay opens a generated game on textworld's engine (seconds); its outcome depends only on
    the transcript, the spec and the engine, so it is kept in the user cache under their digest
    (`_replay_key`) and a new store takes it from there."""
    path = cache_dir() / "prior-replays" / f"{key}.json"
    try:
        kept: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        if set(kept) == _REPLAY_FIELDS:
            return kept
    except (OSError, ValueError):
        pass  # not replayed yet, or a damaged entry: replay again
    _, task, env = open_task(str(prior.spec_path), prior.task_id)
    try:
        result = replay(transcript, env)
    finally:
        env.close()
    kept = {
        "transcript": (result.transcript if result.won else transcript).render(),
        "won": result.won, "note": result.note, "scenes": result.scenes,
        "task_id": task.task_id, "task_type": task.task_type,
    }
    write_whole(path, json.dumps(kept).encode("utf-8"))
    return kept


_REPLAY_FIELDS = {"transcript", "won", "note", "scenes", "task_id", "task_type"}


def _installed(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "-"
