"""Greedy decoding held to a set of strings, token by token, with the model consulted only
where the strings' tokens branch.

A llama.cpp grammar does the same job by checking the whole vocabulary (150k tokens for Qwen)
against the grammar at every sampled token: with ScienceWorld's hundreds of actions that cost
about a second a token on 2 cores, more than the prompt. Here each choice is tokenized once,
the model's logits are read at a branch only, and a token every remaining choice agrees on is
taken without asking the model (it is evaluated with the next branch, if there is one). An
answer that is a whole choice and also the start of a longer one ("open door" and "open door to
kitchen") ends where the model's end-of-answer tokens outscore every way on.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

# Evaluates the given tokens after the context so far and returns the logits of the last token
# of the context (with no tokens: the logits the context already ends with).
Step = Callable[[list[int]], np.ndarray]


@dataclass(frozen=True)
class Chosen:
    text: str
    tokens: int  # the answer's length in tokens
    branches: int  # how many times the model's logits were read


def choose(tokenized: Mapping[str, Sequence[int]], step: Step, end_tokens: Sequence[int]) -> Chosen:
    """The choice (key of `tokenized`, its tokens as values) greedy decoding under the
    constraint picks: at each branch the allowed next token of highest logit."""
    if not tokenized or any(not tokens for tokens in tokenized.values()):
        raise ValueError("choose needs choices that each have at least one token")
    live = [(choice, list(tokens)) for choice, tokens in tokenized.items()]
    pending: list[int] = []
    branches = 0
    depth = 0
    while True:
        ended = [choice for choice, tokens in live if len(tokens) == depth]
        going = [(choice, tokens) for choice, tokens in live if len(tokens) > depth]
        if not going:
            return Chosen(ended[0], depth, branches)
        nexts = list(dict.fromkeys(tokens[depth] for _, tokens in going))
        if len(nexts) == 1 and not ended:
            token = nexts[0]
        else:
            logits = step(pending)
            pending, branches = [], branches + 1
            token = max(nexts, key=lambda t: logits[t])
            if ended and max(logits[t] for t in end_tokens) >= logits[token]:
                return Chosen(ended[0], depth, branches)
        pending.append(token)
        live = [(choice, tokens) for choice, tokens in going if tokens[depth] == token]
        depth += 1
