"""Behaviour shared by every family, as wrappers around an Environment (after TextWorld's `Wrapper`).

A spec opens its environments wrapped (`TaskSetSpec.open`): a step limit that ends the episode
at the spec's cap, and P-RAG's action filter that drops the admissible actions the spec hides.
The families themselves implement neither.
"""
from __future__ import annotations

from dataclasses import replace

from prag.envs.base import Environment, Observation, Task, TaskSource


class Wrapper:
    """An Environment that passes everything to the one it wraps; subclasses change a part."""

    def __init__(self, env: Environment) -> None:
        self.env = env
        self.task: Task = env.task

    def __getattr__(self, name: str) -> object:
        # What a family's environment tells beyond the protocol (ALFWorld's `plan_source`) reads
        # through its wrappers.
        if name == "env":  # not set yet (unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.env, name)

    @property
    def shortest_path_length(self) -> int | None:
        return self.env.shortest_path_length

    @property
    def goal_sentence(self) -> str | None:
        return self.env.goal_sentence

    def reset(self) -> Observation:
        return self.env.reset()

    def step(self, action: str) -> Observation:
        return self.env.step(action)

    def oracle_plan(self) -> list[str]:
        return self.env.oracle_plan()

    def close(self) -> None:
        self.env.close()


class StepLimit(Wrapper):
    """Ends the episode (`done`, not `won`) once `max_steps` actions were taken."""

    def __init__(self, env: Environment, max_steps: int) -> None:
        super().__init__(env)
        self.max_steps = max_steps
        self.steps = 0

    def reset(self) -> Observation:
        self.steps = 0
        return self._capped(self.env.reset())

    def step(self, action: str) -> Observation:
        observation = self.env.step(action)
        self.steps += 1
        return self._capped(replace(observation, done=True) if self.steps >= self.max_steps else observation)

    def _capped(self, observation: Observation) -> Observation:
        return replace(observation, max_steps=self.max_steps)


class ActionFilter(Wrapper):
    """Leaves out the admissible actions that start with one of `hidden` (P-RAG's action filter);
    when that would leave none, all stay."""

    def __init__(self, env: Environment, hidden: tuple[str, ...]) -> None:
        super().__init__(env)
        self.hidden = hidden

    def reset(self) -> Observation:
        return self._filtered(self.env.reset())

    def step(self, action: str) -> Observation:
        return self._filtered(self.env.step(action))

    def _filtered(self, observation: Observation) -> Observation:
        kept = [a for a in observation.admissible if not a.startswith(self.hidden)]
        return replace(observation, admissible=kept or list(observation.admissible))


class WrappedSource:
    """A family's task source whose environments come wrapped: step limit, then action filter."""

    def __init__(self, source: TaskSource, max_steps: int, hidden: tuple[str, ...] = ()) -> None:
        self.source = source
        self.max_steps = max_steps
        self.hidden = hidden

    def tasks(self) -> list[Task]:
        return self.source.tasks()

    def make(self, task: Task) -> Environment:
        env: Environment = StepLimit(self.source.make(task), self.max_steps)
        return ActionFilter(env, self.hidden) if self.hidden else env
