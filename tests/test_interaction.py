"""Retrieval of corrections by the interaction similarity (decay over recent instructions, max over
a transcript's instructions, plus the scene term), and their place in the prompt: first, marked
as corrected by a person, ahead of the agent's own episodes."""
from __future__ import annotations

import numpy as np
import pytest
from support import episode, minilm, run

from prag.agent.agent import PragAgent
from prag.agent.asking.prompt import messages
from prag.agent.config import AgentConfig
from prag.agent.config import PromptLimits
from prag.corrections.prior import load_prior
from prag.envs.domain import GRID
from prag.envs.spec import load_spec
from prag.llm.scripted import ScriptedLLM
from prag.retrieval.corrections import (
    CorrectionSource,
    add_correction,
    asked_alike,
    decayed_query,
    recent_instructions,
)
from prag.retrieval.embed import EmbeddingCache, Encoder
from prag.retrieval.episodes import Experience, ExperienceSource
from prag.retrieval.index import Hit, Visibility
from prag.run.runner import play_episode
from prag.store import Store
from prag.store.corrections import Correction

E = np.eye(4, dtype=np.float32)
VECTORS = {
    "goal": E[0], "u1": E[1], "u2": E[2], "y": E[3],
    "x": np.array([0, 0.6, 0.8, 0], dtype=np.float32),
    "scene now": np.array([0.6, 0.8, 0, 0], dtype=np.float32),
}


class TableEncoder(Encoder):
    """Stand-in encoder with hand-picked vectors, so that scores can be computed by hand."""

    def __init__(self) -> None:
        super().__init__("hand-picked")

    @property
    def dim(self) -> int:
        return 4

    def encode(self, texts):  # type: ignore[no-untyped-def]
        return np.stack([VECTORS[t] for t in texts])


def stored(store: Store, cache: EmbeddingCache, goal: str, instructions: list[str], **fields) -> Correction:
    values = dict(origin="feedback", domain="alfworld", goal=goal, instructions=instructions,
                  transcript=f">>> wait_for_trigger()\n{{'type': 'dialog', 'text': '{goal}'}}\n", verified=True)
    values.update(fields)
    correction = Correction(**values)
    add_correction(store, cache, correction)
    return correction


def test_the_decayed_query_and_scores_equal_a_hand_computed_example():
    # Newest first: u2, u1, goal -> e_t = e3 + 0.6 e2 + 0.36 e1.
    assert recent_instructions(["goal", "u1", "u2"], 3) == ["u2", "u1", "goal"]
    assert np.allclose(decayed_query(np.stack([E[2], E[1], E[0]])), [0.36, 0.6, 1.0, 0.0])
    store = Store.memory()
    cache = EmbeddingCache(store, TableEncoder())
    a = stored(store, cache, "goal", ["goal"], scenes=["goal", "u1"])  # scene vectors e1, e2
    b = stored(store, cache, "x", ["x", "y"], verified=False)
    c = stored(store, cache, "y", ["y"])
    source = CorrectionSource(store, cache, k=3)
    hits = {h.correction.id: h for h in source.retrieve(["goal", "u1", "u2"], "scene now")}
    # a: max_j e_t . E(I_a^j) = 0.36; scene term max(0.6, 0.8) = 0.8 at its second scene.
    assert hits[a.id].interaction_score == pytest.approx(0.36)
    assert hits[a.id].scene_score == pytest.approx(0.8) and hits[a.id].best_step == 1
    assert hits[a.id].score == pytest.approx(1.16)
    # b: max(0.6 * 0.6 + 0.8 * 1, 0) = 1.16, no scenes, unverified: 1.16 - 0.25.
    assert hits[b.id].interaction_score == pytest.approx(1.16)
    assert hits[b.id].score == pytest.approx(0.91)
    assert hits[c.id].score == pytest.approx(0.0)
    assert [h.correction.id for h in source.retrieve(["goal", "u1", "u2"], "scene now")] == [a.id, b.id, c.id]
    # With N = 2 the goal falls out of the query: a keeps only its scene term.
    two = CorrectionSource(store, cache, k=3, n_instructions=2)
    assert {h.correction.id: round(h.score, 6) for h in two.retrieve(["goal", "u1", "u2"], "scene now")} == {
        a.id: 0.8, b.id: 0.91, c.id: 0.0
    }


def test_a_plan_is_sought_among_the_corrections_asked_alike_however_their_scenes_rank():
    store = Store.memory()
    cache = EmbeddingCache(store, TableEncoder())
    alike = stored(store, cache, "goal", ["goal"], scenes=["y"])  # instructions 1.0, scene 0.0
    # Asked a little alike (0.6), their scenes this very one (1.0): each ranks above it.
    others = [stored(store, cache, "u1", ["scene now"], scenes=["scene now"]) for _ in range(3)]
    ranked = CorrectionSource(store, cache, k=4).retrieve(["goal"], "scene now")
    assert [h.correction.id for h in ranked][-1] == alike.id  # last by instructions and scene together
    pool = asked_alike(ranked, 2)
    # In the pool of two, and in the order of the ranking, after the one other kept.
    assert [h.correction.id for h in pool] == [others[0].id, alike.id]


def test_corrections_are_filtered_by_domain_and_prior_and_deletions_show_after_refresh():
    store = Store.memory()
    cache = EmbeddingCache(store, TableEncoder())
    mine = stored(store, cache, "goal", ["goal"])
    stored(store, cache, "u1", ["u1"], domain="grid")
    prior = stored(store, cache, "u2", ["u2"], origin="prior", name="alfworld-prior/x")
    source = CorrectionSource(store, cache, k=5, domain="alfworld")
    assert {h.correction.id for h in source.retrieve(["goal"])} == {mine.id, prior.id}
    no_prior = CorrectionSource(store, cache, k=5, domain="alfworld", prior=False)
    assert [h.correction.id for h in no_prior.retrieve(["goal"])] == [mine.id]

    store.corrections.delete(mine.id)
    assert no_prior.refresh() == 0 and no_prior.retrieve(["goal"]) == []


def test_the_prompt_puts_corrections_first_marked_as_corrected_by_a_person():
    store = Store.memory()
    cache = EmbeddingCache(store, TableEncoder())
    transcript = (
        ">>> wait_for_trigger()\n{'type': 'dialog', 'text': 'goal'}\n>>> observe()\nYou are in a room.\n"
        + "".join(f'>>> act("go to shelf {i}")\nYou arrive at shelf {i}.\n' for i in range(1, 6))
    )
    stored(store, cache, "goal", ["goal"], transcript=transcript)
    (hit,) = CorrectionSource(store, cache, k=1).retrieve(["goal"])
    own = Experience(
        Hit(1, 1.0, 1.0, 0.0, None), episode()
    )
    prompt = messages(GRID, [own], "goal", [(None, "You are in a room.")], "at: room", ["look"], [], PromptLimits(correction_steps=3),
                      corrections=[hit], utterances=[(0, "try shelf 4")])
    examples = prompt[1]["content"]
    assert examples.index("Corrected by a person 1 (checked: it reaches the goal)") < examples.index("## Attempt 1:")
    assert 'act("go to shelf 3")' in examples and 'act("go to shelf 4")' not in examples  # the budget
    assert 'The person says: "try shelf 4"' in prompt[-1]["content"]


def test_the_agent_shows_matching_corrections_first_and_hears_the_person(tmp_path):
    spec = load_spec("grid-household")
    source = spec.open()
    task = next(t for t in source.tasks() if t.task_type == "wash_dishes")
    env = source.make(task)
    with Store(tmp_path / "s.db") as store:
        store.add_run(run())
        store.add_episode(episode())
        cache = EmbeddingCache(store, minilm())
        cache.vectors([episode().goal] + [s.scene for s in episode().steps])
        load_prior(store, cache, domain="grid")
        corrections = CorrectionSource(store, EmbeddingCache(store, minilm(), read_only=True), k=1, domain="grid")
        experiences = ExperienceSource(store, EmbeddingCache(store, minilm(), read_only=True), "prag", 1)
        experiences.refresh()
        plan: list[str] = []

        def follow(messages_):  # the solver's plan, step by step (a stand-in for the model)
            return plan[sum(line.startswith("> ") for line in messages_[-1]["content"].split("\n"))]

        llm = ScriptedLLM(follow)
        agent = PragAgent(llm, experiences, Visibility(), AgentConfig(think=False), corrections=corrections, domain=GRID)

        def speak(step, observation, agent_):  # before each action, after step `step.t`
            if step.t == 0:
                plan.extend(env.oracle_plan())
            if step.t == 1:
                agent_.hear("the sink is in the kitchen")
            return True

        _, won, trace = play_episode(env, agent, speak)
        env.close()
    assert won
    first = llm.calls[0]["messages"][1]["content"]
    assert first.startswith("Examples corrected by a person")
    assert "Wash the dishes" in first.split("Past attempts")[0]  # the prior wash_dishes transcript
    assert first.index("Corrected by a person 1") < first.index("Past attempts")
    later = llm.calls[2]["messages"][-1]["content"]
    assert 'The person says: "the sink is in the kitchen"' in later
    assert 'Note: the person told you: "the sink is in the kitchen"' in later
    assert trace.report.utterances == [(1, "the sink is in the kitchen")]
    assert trace.report.corrections and all(isinstance(i, int) for i in trace.report.corrections)
