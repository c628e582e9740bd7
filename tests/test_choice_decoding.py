"""Picking one of a set of strings token by token (prag.llm.choice_decoding), with a scripted
stand-in for the model's logits, then with the real local model."""
from __future__ import annotations

import numpy as np
import pytest

from prag.llm.choice_decoding import choose

END = 0


def scripted(prefer: dict[int, float]) -> tuple[list[list[int]], object]:
    """A stand-in model whose logits are fixed per token id; records what it was asked to evaluate."""
    asked: list[list[int]] = []

    def step(more: list[int]) -> np.ndarray:
        asked.append(list(more))
        logits = np.zeros(16)
        for token, value in prefer.items():
            logits[token] = value
        return logits

    return asked, step


def test_the_model_is_asked_only_where_the_choices_branch() -> None:
    # "move pot to sink" and "move pot to stove" share three tokens, then branch.
    tokenized = {"move pot to sink": [1, 2, 3, 4], "move pot to stove": [1, 2, 3, 5], "look": [6]}
    asked, step = scripted({5: 2.0, 4: 1.0, 1: 0.5})
    chosen = choose(tokenized, step, [END])
    assert chosen.text == "move pot to stove" and chosen.tokens == 4
    # Asked at the start, then once the shared tokens were taken (evaluated together, no logits read).
    assert asked == [[], [1, 2, 3]] and chosen.branches == 2


def test_a_choice_that_begins_a_longer_one_ends_when_the_model_would_stop() -> None:
    tokenized = {"open door": [1, 2], "open door to kitchen": [1, 2, 3, 4]}
    _, stop_here = scripted({END: 3.0, 3: 1.0})
    assert choose(tokenized, stop_here, [END]).text == "open door"
    _, go_on = scripted({END: 1.0, 3: 3.0})
    assert choose(tokenized, go_on, [END]).text == "open door to kitchen"


def test_an_empty_choice_is_refused() -> None:
    with pytest.raises(ValueError):
        choose({"look": [1], "": []}, scripted({})[1], [END])


def test_the_local_model_picks_an_admissible_action_among_hundreds() -> None:
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    from prag.errors import LLMError
    from prag.llm.local import LocalLLM
    from prag.llm.model_files import MODELS, model_path

    try:
        llm = LocalLLM(model_path(MODELS["0.5b"]))
    except LLMError as exc:
        pytest.skip(f"the local 0.5B model is not available: {exc}")
    things = ["metal pot", "sink", "orange in bowl", "stove", "table", "fridge", "door", "door to kitchen"]
    choices = [f"move {a} to {b}" for a in things for b in things if a != b] + [f"open {t}" for t in things]
    prompt = [{"role": "user", "content": "Reply with exactly this action and nothing else: open door to kitchen"}]
    answer = llm.complete(prompt, choices=choices)
    assert answer.text == "open door to kitchen" and answer.cost.completion_tokens >= 3
    shorter = [{"role": "user", "content": "Reply with exactly this action and nothing else: open door"}]
    assert llm.complete(shorter, choices=choices).text == "open door"
