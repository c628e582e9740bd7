"""Means-ends search on real engines: how often its plan wins once the things are seen, and how long
a call takes.

Each task is explored as an agent would that knew where to look: the oracle plan's `go to` and
`open` steps only (nothing taken, heated or toggled). Then `means_ends` plans on what was observed,
and its plan is played in the engine; a step that is not admissible when its turn comes makes the
player search again (at most four times), as the agent's mediator does. Calls are timed without
the cache (the first call of a process, which loads the planner, is left out).

    python benchmarks/search.py alfworld-valid-seen     # real games (needs ALFWORLD_DATA)
    python benchmarks/search.py alfworld-mini           # any spec: generated games, grid-household, ...
"""
from __future__ import annotations

import sys
import time
from collections import Counter

from prag.agent.world.observed import Observed
from prag.agent.world.search import _solve, means_ends
from prag.envs.registry import domain as domain_of
from prag.envs.spec import load_spec

REPLANS = 4


def main(spec_name: str) -> None:
    spec = load_spec(spec_name)
    domain = domain_of(spec.env)
    source = spec.open_unwrapped()
    won, played, unplanned = Counter[str](), Counter[str](), Counter[str]()
    times: list[float] = []  # wall-clock seconds per call
    cpu: list[float] = []  # CPU seconds per call (what other processes on the machine do not inflate)
    means_ends("", Observed(domain, ""), [], domain)  # loads the planner
    for task in source.tasks():
        env = source.make(task)
        try:
            obs = env.reset()
            state = Observed.start(obs, domain)
            for action in env.oracle_plan():
                if action.startswith(("go to ", "open ")) and action in obs.admissible and not obs.won:
                    obs = env.step(action)
                    state.update(action, obs)
            if obs.won:  # won before anything was taken (some real games start won): no task for search
                print(f"{task.task_id}: won before search, left out", flush=True)
                continue
            for attempt in range(REPLANS + 1):
                _solve.cache_clear()
                start, start_cpu = time.perf_counter(), time.process_time()
                plan = means_ends(obs.goal, state, obs.admissible, domain)
                times.append(time.perf_counter() - start)
                cpu.append(time.process_time() - start_cpu)
                if plan is None:
                    unplanned[task.task_type] += attempt == 0
                    break
                for action in plan.steps:
                    if obs.won or action not in obs.admissible:
                        break
                    obs = env.step(action)
                    state.update(action, obs)
                if obs.won:
                    break
        finally:
            env.close()
        played[task.task_type] += 1
        won[task.task_type] += obs.won
        print(f"{task.task_id}: {'won' if obs.won else 'lost'}", flush=True)
    times.sort()
    cpu.sort()
    print(f"\n{'task type':<32} {'won':>9} {'no plan':>8}")
    for task_type in sorted(played):
        print(f"{task_type:<32} {won[task_type]:>4}/{played[task_type]:<4} {unplanned[task_type]:>8}")
    total, wins = sum(played.values()), sum(won.values())
    print(f"{'all':<32} {wins:>4}/{total:<4} {sum(unplanned.values()):>8}")
    print(f"search: {len(times)} calls, median {1000 * times[len(times) // 2]:.0f} ms, "
          f"90th percentile {1000 * times[int(0.9 * len(times))]:.0f} ms, slowest {1000 * times[-1]:.0f} ms "
          f"(CPU: median {1000 * cpu[len(cpu) // 2]:.0f} ms, slowest {1000 * cpu[-1]:.0f} ms)")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
