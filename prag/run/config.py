"""A run's settings, nested by concern and recorded whole with the run.

`RunConfig(experiment, retrieval, agent, execution)`: what is played, how the store is searched,
how the agent decides (its own `AgentConfig`), and how the run is carried out. `to_dict()` is what
the store keeps, with the config version and the prag that wrote it, so that `--resume` rebuilds
the run exactly and `--round0-from` can tell whether another run's round 0 stands for this one's.

Versions: 1 is the flat dict of the first prag releases (18 keys, no version key, only `think`
and `constrained` of the agent's settings); `from_dict` converts it. 2 is this nested one.
"""
from __future__ import annotations

import functools
from dataclasses import asdict, dataclass, field, fields
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from pydantic import TypeAdapter, ValidationError

from prag.agent.agent import parse_readers, parse_sources
from prag.agent.config import ACTION_MODELS, EXPLORE, AgentConfig
from prag.agent.config import RETRIEVE_AT
from prag.agent.sources.mediator import POLICIES
from prag.agent.world.places import parse_places
from prag.errors import ConfigError, PragError
from prag.llm import DEFAULT_RETRIES, DEFAULT_TIMEOUT
from prag.llm.base import timeout_problem
from prag.retrieval.embed import DEFAULT_MODEL
from prag.retrieval.index import check_mode
from prag.store.records import RunRecord
from prag.store.visibility import Visibility

CONFIG_VERSION = 2
EXECUTORS = ("threads", "processes", "ray")

# Field metadata: the setting does not change what round 0 plays (see `round0_settings`).
NOT_IN_ROUND0: dict[str, Any] = {"round0": False}


@dataclass(frozen=True)
class ExperimentConfig:
    """What is played: the task sets, how many rounds, the LLM, its seed and the step cap."""

    spec: str
    rounds: int = field(default=3, metadata=NOT_IN_ROUND0)  # rounds played, round 0 among them
    train: str | None = None  # iterate on this spec, then evaluate `spec` once with the store frozen
    limit: int | None = None  # play only the first N tasks of each set (smoke tests)
    max_steps: int | None = None  # default: the spec's
    llm: str = "local"  # a `make_llm` spec
    seed: int = 0  # the LLM's sampling seed
    # Start from this run's round 0 (copied), e.g. to compare retrieval modes from one round 0.
    round0_from: str | None = field(default=None, metadata=NOT_IN_ROUND0)


@dataclass(frozen=True)
class RetrievalConfig:
    """What the prompt is given from the store: past episodes and corrections by a person."""

    # Round 0 retrieves nothing of the run's own, so the mode and k only matter from round 1.
    mode: str = field(default="prag", metadata=NOT_IN_ROUND0)  # prag | goal | none
    k: int = field(default=3, metadata=NOT_IN_ROUND0)  # episodes per prompt
    embedding_model: str = DEFAULT_MODEL
    include_runs: tuple[str, ...] = ()  # earlier runs whose episodes round 0 may retrieve
    corrections: bool = True  # the corrections layer (transcripts corrected by a person) in prompts
    # Corrections shown per prompt, ahead of the k episodes. One: a second slot mostly held
    # another task type's transcript and changed with the scene, re-costing the prompt each time.
    corrections_k: int = 1
    prior: bool = True  # the shipped human-written transcripts, as the first corrections

    def visibility(self, run_id: str, round_: int) -> Visibility:
        """What round `round_` of run `run_id` sees of the store (the progressive rule): the run's
        earlier rounds and the runs it includes. Its retrieval, places, readings and action model alike."""
        return Visibility(run_id, round_, self.include_runs)


@dataclass(frozen=True)
class ExecutionConfig:
    """How the run is carried out, not what it plays."""

    workers: int = 1  # episodes played in parallel within a round
    llm_timeout: float = DEFAULT_TIMEOUT  # seconds one call to an LLM server may take, retries included
    llm_retries: int = DEFAULT_RETRIES  # further requests after a failed one
    answer_cache: bool = True  # greedy answers served from the store's cache (prag.store.answers)
    # threads (in this process; processes for engines that are not thread-safe) | processes | ray
    # (prag.run.executors)
    executor: str = "threads"
    ray_address: str | None = None  # the Ray cluster to join (None: start a local one)
    # OpenAI-compatible servers the episodes are spread over (prag.llm.balance); () for the
    # one OPENAI_BASE_URL names (a comma list there spreads too).
    llm_urls: tuple[str, ...] = ()


@dataclass(frozen=True)
class RunConfig:
    """Every setting of a run, recorded whole with it."""

    experiment: ExperimentConfig
    retrieval: RetrievalConfig = field(default_factory=RetrievalConfig)
    agent: AgentConfig = field(default_factory=AgentConfig)
    execution: ExecutionConfig = field(default_factory=ExecutionConfig)

    def check(self) -> None:
        """Refuse settings no run can be played with, saying which option to change."""
        check_mode(self.retrieval.mode)
        experiment = self.experiment
        if experiment.rounds < 1:
            raise PragError("--rounds must be at least 1")
        if experiment.limit is not None and experiment.limit < 1 or experiment.max_steps is not None and experiment.max_steps < 1:
            raise PragError("--limit and --max-steps must be at least 1 (leave them out for the whole set and the spec's cap)")
        if self.retrieval.k < 0 or self.execution.workers < 1 or self.retrieval.corrections_k < 0:
            raise PragError("--k and --corrections-k must be 0 or more and --workers at least 1")
        timeout = timeout_problem(self.execution.llm_timeout)
        if timeout is not None or self.execution.llm_retries < 0:
            raise PragError(f"--llm-timeout: {timeout}" if timeout else "--llm-retries must be 0 or more")
        execution = self.execution
        if execution.executor not in EXECUTORS:
            raise PragError(f"--executor {execution.executor!r}: use one of {', '.join(EXECUTORS)}")
        if execution.ray_address and execution.executor != "ray":
            raise PragError("--ray-address names a Ray cluster: give it with --executor ray")
        if execution.llm_urls and not experiment.llm.startswith("openai:"):
            raise PragError("--llm-url names OpenAI-compatible servers: give it with --llm openai:MODEL")
        agent = self.agent
        if agent.ask not in POLICIES:
            raise PragError(f"--ask {agent.ask!r} is not a policy: use one of {', '.join(POLICIES)}")
        if not 0 <= agent.ask_probability <= 1 or agent.plan_pool < 1:
            raise PragError("--ask-p must be between 0 and 1")
        if agent.asker is not None and agent.ask != "learned":
            raise PragError("--asker names a learned policy: give it with --ask learned")
        parse_sources(",".join(agent.sources))
        parse_readers(",".join(agent.readers))
        parse_places(",".join(agent.places))
        if agent.limits.retrieve not in RETRIEVE_AT:
            raise PragError(f"--retrieve-at {agent.limits.retrieve!r}: use one of {', '.join(RETRIEVE_AT)}")
        if agent.action_model not in ACTION_MODELS:
            raise PragError(f"--action-model {agent.action_model!r}: use one of {', '.join(ACTION_MODELS)}")
        if agent.explore not in EXPLORE:
            raise PragError(f"--explore {agent.explore!r}: use one of {', '.join(EXPLORE)}")

    def to_dict(self) -> dict[str, Any]:
        """The config as the store records it: every setting, the version and the prag that wrote it."""
        return {"version": CONFIG_VERSION, "prag": prag_version(), **asdict(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunConfig:
        """The config a run recorded, from this or an older prag; a ConfigError says why not."""
        if "version" not in data and "spec" in data:
            return _from_flat(data)
        written_by = f"prag {data['prag']}" if "prag" in data else "another prag"
        if data.get("version") != CONFIG_VERSION:
            raise ConfigError(
                f"its settings are of config version {data.get('version')!r}, written by {written_by}; "
                f"this is prag {prag_version()}, which reads versions 1 to {CONFIG_VERSION}: use that prag"
            )
        body = {key: value for key, value in data.items() if key not in {"version", "prag"}}
        return _build(body, written_by)


def round0_settings(config: RunConfig) -> dict[str, Any]:
    """What round 0 plays depends on, by dotted name: every setting but the execution's and those
    marked NOT_IN_ROUND0 (the retrieval mode and k, the number of rounds, round0_from)."""
    settings: dict[str, Any] = {}
    for section in (config.experiment, config.retrieval, config.agent):
        name = _SECTION_NAMES[type(section)]
        for f in fields(section):
            if f.metadata.get("round0", True):
                settings.update(_flatten(getattr(section, f.name), f"{name}.{f.name}"))
    return settings


def recorded_config(run: RunRecord) -> RunConfig:
    """The config a run was started with, from whichever prag recorded it."""
    try:
        return RunConfig.from_dict(run.config)
    except ConfigError as exc:
        raise ConfigError(f"run {run.id}: {exc}") from None


def prag_version() -> str:
    """The installed prag's version, recorded with every config."""
    try:
        return version("prag")
    except PackageNotFoundError:  # a checkout used without installing it
        return "unknown"


_SECTION_NAMES = {ExperimentConfig: "experiment", RetrievalConfig: "retrieval", AgentConfig: "agent", ExecutionConfig: "execution"}

# Version 1's flat keys, by the section they moved to.
_FLAT_KEYS = {
    "experiment": ("spec", "rounds", "train", "limit", "max_steps", "llm", "seed", "round0_from"),
    "retrieval": ("mode", "k", "embedding_model", "include_runs", "corrections", "corrections_k", "prior"),
    "agent": ("think", "constrained"),
    "execution": ("workers",),
}


def _from_flat(flat: dict[str, Any]) -> RunConfig:
    """Version 1 (a flat dict) as version 2. The agent settings it did not record were the
    `AgentConfig` defaults, so the defaults stand for them."""
    nested = {section: {key: flat[key] for key in keys if key in flat} for section, keys in _FLAT_KEYS.items()}
    known = {key for keys in _FLAT_KEYS.values() for key in keys}
    unknown = sorted(set(flat) - known)
    if unknown:
        raise ConfigError(f"its settings are from an unknown prag (flat config with {', '.join(unknown)}): use that prag")
    return _build(nested, "an older prag")


@functools.cache
def _adapter() -> TypeAdapter[RunConfig]:
    """pydantic's validator of a config, built when a recorded config is first read (not at
    import: every command imports this module, few read a config)."""
    return TypeAdapter(RunConfig)


def _build(body: dict[str, Any], written_by: str) -> RunConfig:
    try:
        config = _adapter().validate_python(body)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"its settings, written by {written_by}, do not fit this prag ({problems})") from None
    unknown = sorted(set(_flatten(body)) - set(_flatten(asdict(config))))
    if unknown:
        raise ConfigError(
            f"its settings, written by {written_by}, name settings this prag {prag_version()} does not know "
            f"({', '.join(unknown)}): use that prag"
        )
    return config


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Nested dicts and dataclasses as {dotted name: value}."""
    if hasattr(value, "__dataclass_fields__"):
        value = asdict(value)
    if not isinstance(value, dict):
        return {prefix: value}
    flat: dict[str, Any] = {}
    for key, item in value.items():
        flat.update(_flatten(item, f"{prefix}.{key}" if prefix else key))
    return flat
