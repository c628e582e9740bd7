"""`prag train-asker`: train When2Ask's learned ask policy with PPO and keep it in the store."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from prag.agent.agent import parse_sources
from prag.agent.config import AgentConfig
from prag.cli import app
from prag.cli.common import LLMRetriesOpt, LLMTimeoutOpt, console, guarded, injected_llm, label_option
from prag.cli.layout import show
from prag.envs.spec import load_spec
from prag.llm import DEFAULT_RETRIES, DEFAULT_TIMEOUT, SPEC_HELP, make_llm
from prag.retrieval.embed import DEFAULT_MODEL, Encoder
from prag.store import Store
from prag.store.ask_policies import DEFAULT_NAME
from prag.text import shown

if TYPE_CHECKING:
    from prag.run.asker import Summary


@app.command("train-asker")
@guarded
def train_asker_cmd(
    store_path: Annotated[Path, typer.Argument(metavar="STORE", help="Experience store whose episodes the agent retrieves; the policy is stored in it.")],
    spec_name: Annotated[str, typer.Argument(metavar="SPEC", help="Task-set spec to train on: a name from `prag envs list` or a .toml path.")],
    llm: Annotated[str, typer.Option("--llm", help=SPEC_HELP)] = "local",
    timesteps: Annotated[int, typer.Option("--timesteps", min=2, help="PPO's training budget, in ask / follow decisions.")] = 2048,
    penalty: Annotated[float, typer.Option("--penalty", min=0.0, help="lambda: the cost of an ask whose answer was the plan being followed.")] = 0.1,
    gamma: Annotated[float, typer.Option("--gamma", min=0.0, max=1.0, help="A win pays gamma ** steps.")] = 0.99,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="Train on the first N tasks of the set only.")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of PPO (network initialisation and sampling).")] = 0,
    name: Annotated[str, typer.Option("--name", callback=label_option, help="Name to store the policy under; an existing name gets a new version.")] = DEFAULT_NAME,
    model: Annotated[str, typer.Option("--model", help="Sentence-embedding model: a name or a local path.")] = DEFAULT_MODEL,
    sources: Annotated[str, typer.Option("--sources", help="The agents' knowledge sources, as for `prag run --sources`.")] = ",".join(AgentConfig.sources),
    llm_timeout: LLMTimeoutOpt = DEFAULT_TIMEOUT,
    llm_retries: LLMRetriesOpt = DEFAULT_RETRIES,
) -> None:
    """Train the `learned` ask policy (When2Ask's mediator) with PPO on SPEC's tasks and store it.

    The agent retrieves from STORE as in a run, and the policy learns when asking the LLM pays:
    a win pays gamma ** steps, an ask whose answer was the plan's next step costs --penalty.
    Nothing is stored of the training episodes but the policy and its reward curve.
    """
    # stable-baselines3 and torch take seconds to import: only this command needs them.
    from prag.run.asker import train_asker

    spec = load_spec(spec_name)
    chosen = parse_sources(sources)
    with Store(store_path, create=False) as store:
        console.print(shown(f"training an ask policy on {spec.name} with {llm}: {timesteps} decisions, "
                            f"penalty {penalty}, gamma {gamma}"), highlight=False)
        record, trained = train_asker(
            store, spec, injected_llm(llm) or make_llm(llm, timeout=llm_timeout, retries=llm_retries), Encoder(model),
            timesteps=timesteps, penalty=penalty, gamma=gamma, limit=limit, seed=seed, name=name,
            sources=chosen,
        )
    curve = Table(title="reward curve (episodes finished in each PPO rollout)")
    for column in ("timesteps", "episodes", "mean return", "asks/episode"):
        curve.add_column(column, justify="right")
    for point in record.curve:
        curve.add_row(str(point["timesteps"]), str(point["episodes"]), f"{point['mean_return']:.3f}", f"{point['asks']:.1f}")
    show(console, curve)
    evaluation = Table(title=f"evaluation: each of the {len(record.tasks)} tasks once")
    for column in ("policy", "won", "mean return", "asks/episode", "same-plan asks/episode", "steps/episode"):
        evaluation.add_column(column, justify="right")
    for label, summary in (("always", trained.before), ("learned", trained.after)):
        evaluation.add_row(label, *_figures(summary))
    show(console, evaluation)
    console.print(shown(
        f"stored ask policy {record.name} version {record.version} in {store_path} "
        f"({len(record.model) / 1024:.0f} KB, trained on {record.spec}: {len(record.tasks)} tasks, llm {record.llm}, "
        f"seed {record.seed})"), highlight=False,
    )


def _figures(summary: Summary) -> list[str]:
    return [
        f"{summary.won}/{summary.episodes}", f"{summary.mean_return:.3f}", f"{summary.asks:.1f}",
        f"{summary.same_plan_asks:.1f}", f"{summary.steps:.1f}",
    ]
