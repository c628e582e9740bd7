"""One record of what LLM calls cost (prag.llm.base.Cost): an answer's, an episode's as its agent
counts it and as the store keeps it (the episode's own fields, which stores and exported lines
name), and a round's are the same sums."""
from __future__ import annotations

from conftest import plan_follower, plans_of, write_spec
from support import minilm

from prag.llm.base import Completion, Cost, Message
from prag.llm.scripted import ScriptedLLM
from prag.run.config import ExecutionConfig, ExperimentConfig, RetrievalConfig, RunConfig
from prag.run.metrics import round_metrics
from prag.run.runner import Runner, start_run
from prag.store import Store


def test_costs_add_field_by_field() -> None:
    assert Cost(1, 100, 60, 4, 0.5) + Cost(2, 300, 200, 9, 1.25) == Cost(3, 400, 260, 13, 1.75)
    assert Cost.total([Cost(1, 10, 0, 1, 0.25)] * 3) == Cost(3, 30, 0, 3, 0.75) and Cost.total([]) == Cost()


class Recorded(ScriptedLLM):
    """The scripted stand-in, keeping every answer it gave (with what it cost)."""

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.answered: list[Completion] = []

    def complete(self, messages: list[Message], **kwargs) -> Completion:  # type: ignore[no-untyped-def]
        answer = super().complete(messages, **kwargs)
        self.answered.append(answer)
        return answer


def test_the_answers_costs_are_the_episodes_as_stored_read_for_the_figures_and_summed_by_round(tmp_path) -> None:
    """The stand-in counts each prompt's words as its tokens and the words it shares with the
    last prompt as cached: every field differs, so a field read into another would show."""
    spec = write_spec(tmp_path, "cost", ["throw_away_trash", "collect_toys"])
    llm = Recorded(plan_follower(plans_of(spec)))
    # No answer cache: every answer is the model's own, as the stand-in recorded it.
    config = RunConfig(ExperimentConfig(spec=spec, rounds=1), RetrievalConfig(mode="none", k=0),
                       execution=ExecutionConfig(answer_cache=False))
    with Store(tmp_path / "s.db") as store:
        run = start_run(store, config)
        Runner(store, run, config, llm=llm, encoder=minilm()).play()
        episodes = list(store.episodes(run.id))
        outcomes = store.outcomes([run.id])
    answered = Cost.total(answer.cost for answer in llm.answered)
    assert answered.calls == len(llm.answered) > 0 and 0 < answered.cached_tokens < answered.prompt_tokens
    assert Cost.total(episode.cost for episode in episodes) == answered
    assert [outcome.cost for outcome in outcomes] == [episode.cost for episode in episodes]
    (figures,) = round_metrics(outcomes)
    assert figures.cost == answered
