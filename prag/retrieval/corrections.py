"""Retrieval of corrections by the interaction similarity of Bärmann et al. (2024).

From the current history take the N most recent instructions, newest first: I_t^1 … I_t^N
(the person's utterances, then the goal, which was the first thing said). Their embeddings
are summed with a decay,

    e_t = Σ_i γ^(i-1) E(I_t^i),   γ = 0.6,

and a stored transcript H scores max_j e_t · E(I_H^j) over its instructions. For environment
tasks the P-RAG scene-graph term max_t cos(scene now, scene of H at t) is added, as for the
agent's own episodes. An unverified correction (its replay did not win) counts for less:
`UNVERIFIED_PENALTY` is taken off its score, so it outranks a verified one only when it matches
clearly better.

Each correction's transcript is read once, when the corrections are loaded; one that cannot be
read (written by another program, or by a prag before transcripts were checked) is left out
with a warning, so that it never stops a run.
"""
from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from prag.retrieval.embed import EmbeddingCache
from prag.store import Store
from prag.store.corrections import Correction, correction_texts, read_transcript
from prag.store.transcripts import Transcript, TranscriptError
from prag.text import command

_log = logging.getLogger(__name__)

GAMMA = 0.6
N_INSTRUCTIONS = 3
UNVERIFIED_PENALTY = 0.25


def add_correction(store: Store, cache: EmbeddingCache, correction: Correction) -> int:
    """Store a correction with the vectors of its instructions and scenes (written first, so
    retrieval never encodes them), in one transaction; returns its id."""
    with store.transaction():
        cache.vectors(correction_texts(correction))
        return store.corrections.add(correction)


def recent_instructions(instructions: Sequence[str], n: int = N_INSTRUCTIONS) -> list[str]:
    """The n most recent of `instructions` (given oldest first: the goal, then utterances), newest first."""
    return list(reversed(instructions))[:n] if n > 0 else []


def decayed_query(vectors_newest_first: np.ndarray, gamma: float = GAMMA) -> np.ndarray:
    """e_t = Σ_i γ^(i-1) v_i over the rows v_1 (newest) … v_N."""
    weights = gamma ** np.arange(len(vectors_newest_first), dtype=np.float64)
    return (weights @ np.asarray(vectors_newest_first, dtype=np.float64)).astype(np.float32)


@dataclass(frozen=True)
class CorrectionHit:
    """A retrieved correction and how well it matched (instructions, scene graph)."""

    correction: Correction
    transcript: Transcript  # the correction's transcript, read
    score: float
    interaction_score: float
    scene_score: float
    best_step: int | None  # index of the best-matching replayed scene (when a scene was given)


class CorrectionSource:
    """The corrections of a store, held in memory as matrices, scored per query.

    `domain` keeps corrections whose actions read like the task's; `prior=False` leaves out
    the shipped prior transcripts. Call `refresh()` after corrections are added or deleted.
    """

    def __init__(
        self,
        store: Store,
        cache: EmbeddingCache,
        *,
        k: int = 2,
        domain: str | None = None,
        prior: bool = True,
        n_instructions: int = N_INSTRUCTIONS,
        gamma: float = GAMMA,
        scene_term: bool = True,
    ) -> None:
        self.store = store
        self.cache = cache
        self.k = k
        self.domain = domain
        self.prior = prior
        self.n_instructions = n_instructions
        self.gamma = gamma
        self.scene_term = scene_term
        self.corrections: list[Correction] = []
        self.transcripts: list[Transcript] = []
        self.refresh()

    def refresh(self) -> int:
        """Reload the corrections (a small table: deletions must show, so it is read whole)."""
        self.corrections, self.transcripts = [], []
        for correction in self.store.corrections.list(domain=self.domain, prior=self.prior):
            try:
                transcript = read_transcript(correction)
            except TranscriptError as exc:
                _log.warning(
                    "correction %s in %s is left out: its transcript cannot be read (%s); see it with `%s`, "
                    "delete it with `%s`", correction.id, self.store.path, exc,
                    command("prag", "corrections", "show", self.store.path, correction.id),
                    command("prag", "corrections", "delete", self.store.path, correction.id),
                )
                continue
            self.corrections.append(correction)
            self.transcripts.append(transcript)
        instructions = [(i, text) for i, c in enumerate(self.corrections) for text in c.instructions]
        scenes = [(i, text) for i, c in enumerate(self.corrections) for text in c.scenes]
        self._instruction_owner = np.asarray([i for i, _ in instructions], dtype=np.int64)
        self._instruction_vectors = self._vectors([t for _, t in instructions])
        self._scene_owner = np.asarray([i for i, _ in scenes], dtype=np.int64)
        self._scene_vectors = self._vectors([t for _, t in scenes])
        return len(self.corrections)

    def _vectors(self, texts: list[str]) -> np.ndarray:
        return self.cache.vectors(texts) if texts else np.zeros((0, 0), dtype=np.float32)

    def retrieve(self, instructions: Sequence[str], scene: str | None = None, k: int | None = None) -> list[CorrectionHit]:
        """The top-k corrections for the history's instructions (oldest first) and scene graph."""
        k = self.k if k is None else k
        recent = recent_instructions(instructions, self.n_instructions)
        if not self.corrections or k <= 0 or not recent:
            return []
        query = decayed_query(self.cache.vectors(recent), self.gamma)
        interaction = _max_by_owner(self._instruction_vectors @ query, self._instruction_owner, len(self.corrections))
        interaction = np.where(np.isfinite(interaction), interaction, 0.0)
        scene_scores = np.zeros(len(self.corrections), dtype=np.float32)
        best_steps: list[int | None] = [None] * len(self.corrections)
        if self.scene_term and scene is not None and len(self._scene_owner):
            sims = self._scene_vectors @ self.cache.vector(scene)
            best = _max_by_owner(sims, self._scene_owner, len(self.corrections))
            scene_scores = np.where(np.isfinite(best), best, 0.0)
            for i in range(len(self.corrections)):
                own = np.flatnonzero(self._scene_owner == i)
                if len(own):
                    best_steps[i] = int(np.argmax(sims[own]))
        penalty = np.asarray([0.0 if c.verified else UNVERIFIED_PENALTY for c in self.corrections])
        scores = interaction + scene_scores - penalty
        ids = np.asarray([c.id or 0 for c in self.corrections])
        # Ties: the older correction first, as for episodes.
        order = np.lexsort((ids, -np.round(scores, 6)))[:k]
        return [
            CorrectionHit(
                self.corrections[i], self.transcripts[i], float(scores[i]), float(interaction[i]), float(scene_scores[i]), best_steps[i]
            )
            for i in order
        ]


# `retrieve(k=EVERY)`: every correction, ranked (the pool a plan is sought in is chosen from them all).
EVERY = sys.maxsize


def asked_alike(hits: Sequence[CorrectionHit], n: int) -> list[CorrectionHit]:
    """The `n` hits whose instructions match best, in `hits`' order: the pool a plan is sought
    in. A correction of this goal's template whose scenes are of another room (the pear plant's
    began outside) ranked twelfth of 27 by instructions and scene together, and its plan was
    never sought."""
    best = {id(h) for h in sorted(hits, key=lambda h: -h.interaction_score)[:n]}
    return [h for h in hits if id(h) in best]


def _max_by_owner(values: np.ndarray, owners: np.ndarray, count: int) -> np.ndarray:
    """For each owner 0..count-1 the largest of its values (-inf for an owner with none)."""
    best = np.full(count, -np.inf, dtype=np.float64)
    np.maximum.at(best, owners, values.astype(np.float64))
    return best
