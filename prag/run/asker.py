"""Training When2Ask's learned ask policy: the mediator's decision as a gymnasium environment,
PPO from stable-baselines3, and the trained network kept in the store.

`AskEnv` plays a task set's episodes with a real agent and environment. Its observation is the
mediator's state (`MediatorState.features()`) at a step where the agent has a plan to follow;
its action is 1 = ask the LLM, 0 = take the plan's next step. Steps with nothing to follow
(no plan, or the plan used up) are played without a decision: every policy asks there.

Reward (When2Ask): each step pays -lambda when the agent asked and the answer was the plan's next
step anyway (`Decision.same_plan`); a won episode pays gamma ** t at the end, t its number of
steps, so a quicker win is worth more. PPO itself runs undiscounted (its gamma = 1; episodes
end at the step cap), so it maximises exactly sum_t [gamma^t r_t - lambda * 1(ask and same plan)],
the paper's objective; `ask_reward` gives the same figures.
"""
from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

import gymnasium
import numpy as np
from stable_baselines3 import PPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import Logger

from prag.agent.config import AgentConfig
from prag.agent.protocol import Decision
from prag.agent.sources.mediator import AskPolicy, Learned, MediatorState, ask_reward
from prag.envs.base import Environment, Observation, Task, TaskSource
from prag.envs.spec import TaskSetSpec
from prag.errors import PragError
from prag.llm.base import LLM
from prag.retrieval.embed import EmbeddingCache, Encoder
from prag.retrieval.index import Visibility
from prag.run.agents import StoreReaders, build_agent
from prag.run.config import ExperimentConfig, RunConfig
from prag.store import Store
from prag.store.answers import cached
from prag.store.ask_policies import AskPolicyRecord
from prag.store.values import damaged_value

ASK, FOLLOW = 1, 0
NET_ARCH = (32, 32)  # the policy and value networks: two small hidden layers each


class Forced:
    """An ask policy whose answer is set from outside before each step: the training env's hand
    on the agent. Like every policy, it asks when there is no plan to follow."""

    name = "forced"

    def __init__(self) -> None:
        self.value = True

    def ask(self, state: MediatorState) -> bool:
        return not state.can_follow or self.value


class MediatedAgent(Protocol):
    """What the training needs of an agent: play steps, and show the mediator's state."""

    def reset(self, observation: Observation) -> None: ...

    def act(self, observation: Observation) -> Decision: ...

    def observe(self, action: str, observation: Observation) -> None: ...

    def mediator_state(self, observation: Observation) -> MediatorState: ...


# Builds the agent that plays `task`, asking whenever `policy` says so.
AgentFactory = Callable[[Task, AskPolicy], MediatedAgent]


@dataclass(frozen=True)
class EpisodeOutcome:
    """One played episode: what it won, how many steps and asks it took, and its return."""

    task_id: str
    won: bool
    steps: int
    asks: int
    same_plan_asks: int  # asks whose answer was the plan's next step: each cost lambda
    decisions: int  # steps where the policy had a choice
    reward: float


class AskEnv(gymnasium.Env[np.ndarray, np.int64]):
    """The mediator's ask / follow decision over a task set's episodes (When2Ask's MDP).

    Episodes go round the tasks in order; `rewind()` starts the round again from the first task,
    so two policies can be evaluated on the same episodes. Every finished episode, with or
    without decisions, is appended to `finished`.
    """

    metadata: dict[str, Any] = {"render_modes": []}  # gymnasium declares it an attribute

    def __init__(
        self, source: TaskSource, tasks: list[Task], make_agent: AgentFactory, *, max_steps: int,
        penalty: float, gamma: float = 0.99,
    ) -> None:
        if not tasks:
            raise PragError("no tasks to train the ask policy on: check the spec and --limit")
        if penalty < 0 or not 0 < gamma <= 1:
            raise PragError(f"the penalty must be 0 or more and gamma in (0, 1], got {penalty} and {gamma}")
        self.source, self.tasks, self.make_agent = source, tasks, make_agent
        self.max_steps, self.penalty, self.gamma = max_steps, penalty, gamma
        self.observation_space = gymnasium.spaces.Box(0.0, 1.0, (MediatorState.FEATURES,), np.float32)
        self.action_space = gymnasium.spaces.Discrete(2)
        self.policy = Forced()
        self.finished: list[EpisodeOutcome] = []
        self._next = 0
        self._env: Environment | None = None

    def rewind(self) -> None:
        """The next episode plays the first task again."""
        self._next = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        # An episode with no plan to follow anywhere needs no decision: it is played and recorded
        # here, and the next task starts. A whole round of those leaves nothing to learn.
        for _ in range(len(self.tasks)):
            self._start(self.tasks[self._next % len(self.tasks)])
            self._next += 1
            self._carry = self._play_until_choice()
            if not self._over:
                return self._state.features(), {"task_id": self._task.task_id}
            self._finish()
        raise PragError(
            "no task gave the agent a plan to follow, so there is nothing to decide: fill the store with "
            "won episodes of these tasks first (`prag run SPEC --store STORE`)"
        )

    def step(self, action: np.int64 | int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        self.policy.value = bool(action == ASK)
        self._decisions += 1
        reward = self._carry + self._play_step()
        self._carry = 0.0
        if not self._over:
            reward += self._play_until_choice()
        if self._over:
            outcome = self._finish()
            # The step cap is part of the task (the state carries t), so a capped episode ends too.
            return np.zeros(MediatorState.FEATURES, np.float32), reward, True, False, {"outcome": outcome}
        return self._state.features(), reward, False, False, {}

    def close(self) -> None:
        if self._env is not None:
            self._env.close()
            self._env = None

    # --- one episode ----------------------------------------------------------------------

    def _start(self, task: Task) -> None:
        self.close()
        self._task = task
        self._env = self.source.make(task)
        self._observation = self._env.reset()
        self._agent = self.make_agent(task, self.policy)
        self._agent.reset(self._observation)
        self._t = self._asks = self._same = self._decisions = 0
        self._return = 0.0
        self._won = self._over = False

    def _play_step(self) -> float:
        assert self._env is not None
        decision = self._agent.act(self._observation)
        self._observation = self._env.step(decision.action)
        self._agent.observe(decision.action, self._observation)
        self._t += 1
        same = decision.asked and decision.same_plan
        self._asks += int(decision.asked)
        self._same += int(same)
        self._won = self._observation.won
        self._over = self._won or self._observation.done or self._t >= self.max_steps
        reward = ask_reward(self._won, int(same), self.penalty, self.gamma, self._t)
        self._return += reward
        return reward

    def _play_until_choice(self) -> float:
        """Play the steps where there is nothing to follow, up to the next choice or the end."""
        reward = 0.0
        while not self._over:
            self._state = self._agent.mediator_state(self._observation)
            if self._state.can_follow:
                break
            reward += self._play_step()
        return reward

    def _finish(self) -> EpisodeOutcome:
        outcome = EpisodeOutcome(
            self._task.task_id, self._won, self._t, self._asks, self._same, self._decisions, self._return
        )
        self.finished.append(outcome)
        self.close()
        return outcome


Decide = Callable[[np.ndarray], bool]  # features -> ask?


def evaluate(env: AskEnv, decide: Decide, episodes: int | None = None) -> list[EpisodeOutcome]:
    """Play `episodes` episodes (default: each task once) from the first task on with `decide`."""
    wanted = len(env.tasks) if episodes is None else episodes
    env.rewind()
    start = len(env.finished)
    while len(env.finished) - start < wanted:
        features, _ = env.reset()
        over = False
        while not over:
            features, _, over, _, _ = env.step(ASK if decide(features) else FOLLOW)
    return env.finished[start : start + wanted]


@dataclass(frozen=True)
class Summary:
    """Mean figures of a set of episodes."""

    episodes: int
    won: int
    mean_return: float
    asks: float  # per episode
    same_plan_asks: float  # per episode
    steps: float  # per episode

    @classmethod
    def of(cls, outcomes: list[EpisodeOutcome]) -> Summary:
        n = max(len(outcomes), 1)
        return cls(
            len(outcomes), sum(o.won for o in outcomes), sum(o.reward for o in outcomes) / n,
            sum(o.asks for o in outcomes) / n, sum(o.same_plan_asks for o in outcomes) / n,
            sum(o.steps for o in outcomes) / n,
        )


class _Curve(BaseCallback):
    """The reward curve: after each PPO rollout, the mean return and asks of the episodes it finished."""

    def __init__(self, env: AskEnv) -> None:
        super().__init__()
        self.env = env
        self.seen = len(env.finished)
        self.points: list[dict[str, float]] = []

    def _on_step(self) -> bool:
        return True

    def _on_rollout_end(self) -> None:
        new = self.env.finished[self.seen :]
        self.seen = len(self.env.finished)
        if new:
            summary = Summary.of(new)
            self.points.append(
                {"timesteps": self.num_timesteps, "episodes": len(new), "mean_return": summary.mean_return,
                 "asks": summary.asks}
            )


@dataclass
class Trained:
    """A trained policy's network, its reward curve, and the evaluation before and after."""

    model: PPO
    curve: list[dict[str, float]]
    before: Summary  # asking every step (`always`), on the evaluation episodes
    after: Summary  # the trained policy, on the same episodes
    extra: dict[str, Any] = field(default_factory=dict)


def train(env: AskEnv, timesteps: int, seed: int = 0, n_steps: int = 128) -> Trained:
    """Train the ask policy on `env` with PPO for `timesteps` decisions; evaluate it against
    asking every step on the same episodes (each task once)."""
    if timesteps < 2:
        raise PragError(f"--timesteps must be at least 2, got {timesteps}")
    before = Summary.of(evaluate(env, lambda features: True))
    n_steps = max(2, min(n_steps, timesteps))
    model = PPO(
        "MlpPolicy", env, n_steps=n_steps, batch_size=min(32, n_steps), gamma=1.0, learning_rate=1e-3,
        policy_kwargs={"net_arch": list(NET_ARCH)}, seed=seed, device="cpu", verbose=0,
    )
    # A logger with no outputs: SB3's default one makes a directory in /tmp at every learn().
    model.set_logger(Logger(folder=None, output_formats=[]))
    env.rewind()
    curve = _Curve(env)
    model.learn(total_timesteps=timesteps, callback=curve)
    after = Summary.of(evaluate(env, decider(model)))
    return Trained(model, curve.points, before, after, {"net_arch": list(NET_ARCH), "n_steps": n_steps})


def decider(model: PPO) -> Decide:
    """The network's deterministic choice as `features -> ask?`."""

    def decide(features: np.ndarray) -> bool:
        action, _ = model.predict(features, deterministic=True)
        return int(action) == ASK

    return decide


def model_bytes(model: PPO) -> bytes:
    """The model as stable-baselines3 saves it (a zip archive), for the store."""
    buffer = io.BytesIO()
    model.save(buffer)
    return buffer.getvalue()


def learned_policy(record: AskPolicyRecord, store: Path = Path("the store")) -> Learned:
    """A stored policy (of `store`) as the agent's `Learned` ask policy."""
    if record.features != MediatorState.FEATURES:
        raise PragError(
            f"ask policy {record.name!r} v{record.version} reads {record.features} features, this prag's mediator "
            f"gives {MediatorState.FEATURES}: train it again with `prag train-asker`"
        )
    try:
        model = PPO.load(io.BytesIO(record.model), device="cpu")
    except Exception:  # whatever stable-baselines3's zip, pickle and torch readers raise on bytes they did not write
        raise damaged_value(store, f"ask_policies.model of ask policy {record.name} v{record.version}", record.model,
                            "a network stable-baselines3 saved", fix="train it again with `prag train-asker` "
                            "(a new version), or choose another with --asker NAME:VERSION") from None
    return Learned(decider(model))


def record_of(trained: Trained, *, name: str, spec: str, tasks: list[Task], llm: str, timesteps: int,
              penalty: float, gamma: float, seed: int) -> AskPolicyRecord:
    """What the store keeps of a training."""
    return AskPolicyRecord(
        name=name, spec=spec, tasks=[t.task_id for t in tasks], llm=llm, timesteps=timesteps, penalty=penalty,
        gamma=gamma, seed=seed, features=MediatorState.FEATURES, model=model_bytes(trained.model),
        curve=trained.curve,
        extra={**trained.extra, "before": asdict(trained.before), "after": asdict(trained.after)},
    )


def prag_agents(store: Store, spec: TaskSetSpec, llm: LLM, encoder: Encoder, *, config: RunConfig | None = None) -> AgentFactory:
    """P-RAG agents of `config` (a run's defaults unless given) that read everything in `store`
    (its episodes, corrections, places, verified readings, the action model learned from it), built
    by the factory a run's agents are built by (prag.run.agents); nothing they play is stored."""
    config = config or RunConfig(ExperimentConfig(spec.name))
    domain = spec.domain()
    readers = StoreReaders(store, EmbeddingCache(store, encoder, read_only=True), config.retrieval)
    readers.refresh(domain.name)
    players = readers.players(llm)

    def make(task: Task, policy: AskPolicy) -> MediatedAgent:
        return build_agent(config, replace(players, asker=policy), Visibility(), domain)

    return make


def train_asker(
    store: Store, spec: TaskSetSpec, llm: LLM, encoder: Encoder, *, timesteps: int, penalty: float,
    gamma: float = 0.99, limit: int | None = None, seed: int = 0, name: str,
    sources: tuple[str, ...] = AgentConfig.sources,
) -> tuple[AskPolicyRecord, Trained]:
    """Train an ask policy on `spec`'s tasks with agents retrieving from `store` and drawing on
    `sources` (as a run's `--sources`), and store it there as the next version of `name`. The
    LLM's greedy answers go through the store's answer cache: training replays the same prompts
    many times."""
    source = spec.open()
    tasks = source.tasks()[:limit]
    config = RunConfig(ExperimentConfig(spec.name, seed=seed), agent=AgentConfig(sources=sources))
    agents = prag_agents(store, spec, cached(llm, store), encoder, config=config)
    env = AskEnv(source, tasks, agents, max_steps=spec.max_steps, penalty=penalty, gamma=gamma)
    try:
        trained = train(env, timesteps, seed)
    finally:
        env.close()
    trained.extra["sources"] = list(sources)  # what the agents drew on: part of what it was trained on
    record = record_of(
        trained, name=name, spec=spec.name, tasks=tasks, llm=llm.name, timesteps=timesteps, penalty=penalty,
        gamma=gamma, seed=seed,
    )
    return store.ask_policies.add(record), trained
