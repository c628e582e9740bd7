"""A run's settings: recorded whole with the run, so that `--resume` rebuilds it."""
from __future__ import annotations

from dataclasses import dataclass, field

from prag.errors import PragError
from prag.retrieval.index import check_mode


@dataclass
class RunConfig:
    spec: str
    rounds: int = 3
    k: int = 3
    mode: str = "prag"
    llm: str = "local"
    max_steps: int | None = None  # default: the spec's
    workers: int = 1
    seed: int = 0
    train: str | None = None  # iterate on this spec, then evaluate `spec` once with the store frozen
    include_runs: list[str] = field(default_factory=list)
    think: bool = False
    constrained: bool = True
    embedding_model: str = "all-MiniLM-L6-v2"
    limit: int | None = None  # play only the first N tasks of each set (smoke tests)
    corrections: bool = True  # the corrections layer (transcripts corrected by a person) in prompts
    # Corrections shown per prompt, ahead of the k episodes. One: a second slot mostly held
    # another task type's transcript and changed with the scene, re-costing the prompt each time.
    corrections_k: int = 1
    prior: bool = True  # the shipped human-written transcripts, as the first corrections
    # Start from this run's round 0 (copied), e.g. to compare retrieval modes from one round 0.
    round0_from: str | None = None

    def check(self) -> None:
        check_mode(self.mode)
        if self.rounds < 1:
            raise PragError("--rounds must be at least 1")
        if self.k < 0 or self.workers < 1 or self.corrections_k < 0:
            raise PragError("--k and --corrections-k must be 0 or more and --workers at least 1")


# What round 0 depends on when it retrieves nothing of the agent's own: these must match for
# another run's round 0 to stand for this run's (mode and k only matter from round 1 on).
ROUND0_SETTINGS = ("spec", "llm", "max_steps", "seed", "think", "constrained", "embedding_model", "limit",
                   "corrections", "corrections_k", "prior")
