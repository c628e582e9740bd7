"""Task-set specs: TOML files under envs/ that say which environment, which tasks, what step cap.

    name = "alfworld-mini"
    env = "alfworld-gen"          # a family of prag.envs.registry
    max_steps = 30
    description = "..."
    hide_actions = ["help"]       # admissible actions the planner is never offered (prefixes)
    goals = "learned"             # the family's goal templates and schema withheld (default "given")
    [params]                      # family-specific, validated by the family's factory
    tasks_per_type = 3
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from prag.envs.base import TaskSource
from prag.envs.domain import Domain
from prag.envs import registry
from prag.envs.wrappers import WrappedSource
from prag.errors import SpecError
from prag.files import checked_file, read_text
from prag.names import SPEC_NAME_CHARS, name_problem
from prag.paths import spec_dirs


SPEC_FILE = "a task-set spec (TOML text)"
GOALS = ("given", "learned")  # a spec's `goals`


@dataclass(frozen=True)
class TaskSetSpec:
    """A task set as its spec file says: which family, which tasks, what step cap and action filter."""

    name: str
    env: str
    max_steps: int
    path: Path
    description: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    hide_actions: tuple[str, ...] = ()  # P-RAG's action filter: what never helps in this world
    # "given": the family's goal templates, schema and what its goals mean as facts, as it wrote
    # them; "learned": withheld, so that the world is played as a thin family is (prag learns what
    # to achieve from its reward and reads goals in open vocabulary).
    goals: str = "given"

    def domain(self) -> Domain:
        """The family's Domain as this task set plays it: without its goals where they are learned."""
        given = registry.domain(self.env)
        if self.goals == "given":
            return given
        return replace(given, goals=(), goal_schema=None, goal_facts=None, never_done=None)

    def open(self, max_steps: int | None = None) -> WrappedSource:
        """Build the family's task source (validates params, generates or finds games), whose
        environments end at `max_steps` (default: the spec's) and hide the spec's hidden actions."""
        return WrappedSource(self.open_unwrapped(), max_steps or self.max_steps, self.hide_actions)

    def open_unwrapped(self) -> TaskSource:
        """The family's task source as it is: no step limit, no action filter. For replaying a
        transcript, which checks the transcript itself, not an agent's budget."""
        return registry.factory(self.env)(dict(self.params), self.path.parent)


def find_spec(name_or_path: str) -> Path:
    """A path to a spec file, or a spec name looked up in ./envs and the checkout's envs/."""
    path = Path(name_or_path)
    if path.suffix == ".toml" or path.exists():
        if not path.exists():
            raise SpecError(f"no spec file at {path}: give a .toml path or a name from `prag envs list`")
        return checked_file(path, SPEC_FILE, SpecError)
    for directory in spec_dirs():
        candidate = directory / f"{name_or_path}.toml"
        if candidate.is_file():
            return candidate
    raise SpecError(f"no spec named {name_or_path!r}: see `prag envs list` for the known specs")


def list_specs() -> list[Path]:
    seen: dict[str, Path] = {}
    for directory in spec_dirs():
        for path in sorted(directory.glob("*.toml")):
            seen.setdefault(path.stem, path)
    return list(seen.values())


def load_spec(name_or_path: str) -> TaskSetSpec:
    path = find_spec(name_or_path)
    try:
        raw = tomllib.loads(read_text(path, SPEC_FILE, SpecError))
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"{path}: not valid TOML ({exc})") from None
    return parse_spec(raw, path)


def parse_spec(raw: dict[str, Any], path: Path) -> TaskSetSpec:
    def need(key: str, kind: type) -> Any:
        if key not in raw:
            raise SpecError(f"{path}: missing key {key!r}")
        value = raw[key]
        if not isinstance(value, kind) or isinstance(value, bool) and kind is int:
            raise SpecError(f"{path}: {key!r} must be a {kind.__name__}, got {value!r}")
        return value

    unknown = set(raw) - {"name", "env", "max_steps", "description", "params", "hide_actions", "goals"}
    if unknown:
        raise SpecError(
            f"{path}: unknown keys {sorted(unknown)}; allowed: name, env, max_steps, description, hide_actions, goals, params"
        )
    goals = raw.get("goals", "given")
    if goals not in GOALS:
        raise SpecError(f"{path}: 'goals' must be one of {', '.join(GOALS)} (the family's goals, or learned from its reward), "
                        f"got {goals!r}")
    hide = raw.get("hide_actions", [])
    if not isinstance(hide, list) or not all(isinstance(h, str) and h for h in hide):
        raise SpecError(f"{path}: 'hide_actions' must be a list of action prefixes, got {hide!r}")
    env = need("env", str)
    try:
        registry.family(env)
    except SpecError as unknown:
        raise SpecError(f"{path}: {unknown}") from None
    max_steps = need("max_steps", int)
    if max_steps < 1:
        raise SpecError(f"{path}: max_steps must be at least 1, got {max_steps}")
    params = raw.get("params", {})
    if not isinstance(params, dict):
        raise SpecError(f"{path}: [params] must be a table")
    name = raw.get("name", path.stem)
    if not isinstance(name, str):
        raise SpecError(f"{path}: 'name' must be a str, got {name!r}")
    problem = name_problem(name, path=True, limit=SPEC_NAME_CHARS)  # it begins the default run id
    if problem is not None:
        raise SpecError(f"{path}: 'name' {name!r} cannot name a task set: {problem}; give a name of at most "
                        f"{SPEC_NAME_CHARS} characters without / or \\ (it begins the ids of its runs)")
    return TaskSetSpec(
        name=name,
        env=env,
        max_steps=max_steps,
        path=path,
        description=str(raw.get("description", "")),
        params=params,
        hide_actions=tuple(hide),
        goals=goals,
    )
