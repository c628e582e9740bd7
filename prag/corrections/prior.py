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
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from prag.corrections.replay import open_task, replay
from prag.corrections.transcripts import parse
from prag.envs import registry
from prag.envs.spec import load_spec
from prag.retrieval.embed import EmbeddingCache
from prag.store import Store
from prag.store.corrections import Correction, correction_texts


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
            found.append(PriorTranscript(f"{spec_path.stem}/{path.stem}", spec_path, path.stem, path.read_text()))
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
        _, task, env = open_task(str(prior.spec_path), prior.task_id)
        try:
            result = replay(transcript, env)
        finally:
            env.close()
        correction = Correction(
            origin="prior",
            domain=registry.domain(spec.env).name,
            goal=transcript.goal,
            instructions=list(dict.fromkeys(transcript.instructions)),
            transcript=(result.transcript if result.won else transcript).render(),
            verified=result.won,
            verify_note=result.note,
            scenes=result.scenes,
            spec=str(prior.spec_path),
            task_id=task.task_id,
            task_type=task.task_type,
            name=prior.name,
            improvement_model="person",
            input_transcript=prior.text,
        )
        cache.vectors(correction_texts(correction))
        if store.corrections.add_prior(correction, prior.digest):
            loaded.append(correction)
    return loaded
