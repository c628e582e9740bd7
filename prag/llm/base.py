"""The one interface the agent talks to: a chat completion with token accounting.

`choices` asks for constrained decoding: the answer must be exactly one of the strings. A backend
that can enforce it (a llama.cpp grammar, vLLM's guided choice) says so in `supports_choices`;
one that cannot returns free text, and the caller validates either way. With `more_lines = m`
the answer is a short plan: its first line one of the choices, then up to m further lines of
free text. A grammar can say that; a server that only does guided choice answers the first
line alone. `grammar` (GBNF) constrains an answer of another shape, a goal reading's sentence of
slots (`prag.agent.goals.readers`): a backend that enforces `choices` enforces it too.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

Message = dict[str, str]  # {"role": "system" | "user" | "assistant", "content": ...}

DEFAULT_TIMEOUT = 60.0  # seconds one call to a server may take in all, its retries and pauses included
DEFAULT_RETRIES = 2  # further requests within that time after a refused connection, 429/5xx or junk
# The longest timeout: a day. Past it a wait is a slip, and an infinite one overflows a thread's wait.
MAX_TIMEOUT = 86_400.0


def timeout_problem(seconds: float) -> str | None:
    """What is wrong with a timeout of `seconds` (None: nothing), for every place that takes one."""
    if not 0 < seconds <= MAX_TIMEOUT:  # NaN fails this too
        return f"give more than 0 seconds and at most {MAX_TIMEOUT:g} (a day), not {seconds:g}"
    return None
# A generous ceiling on characters per generated token, so a server that ignores max_tokens
# cannot hand back megabytes; real answers average about four.
_CHARS_PER_TOKEN = 16
# Room for what models wrap around a chosen action ("Action: ", quotes, a full stop).
_CHOICE_DECORATION = 16


@dataclass(frozen=True)
class Cost:
    """What LLM calls cost: how many, the tokens they read and wrote, the seconds they took.

    One answer's (`Completion.cost`: one call), an episode's (`prag.agent.protocol.Usage`, stored
    as the episode's columns: `EpisodeRecord.cost`) and a round's (prag.run.metrics) alike."""

    calls: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0  # of the prompt tokens, those reused from the backend's prefix cache (0 when unknown)
    completion_tokens: int = 0
    seconds: float = 0.0  # spent waiting for the answers

    @classmethod
    def total(cls, costs: Iterable[Cost]) -> Cost:
        """The costs added up, field by field: one record made, where `sum` makes one per cost
        (13,440 episodes' costs cost a round's figures 15 ms so)."""
        fields = zip(*((c.calls, c.prompt_tokens, c.cached_tokens, c.completion_tokens, c.seconds) for c in costs))
        return cls(*map(sum, fields))

    def __add__(self, other: Cost) -> Cost:
        return Cost.total((self, other))


@dataclass(frozen=True)
class Completion:
    """One answer and what it cost."""

    text: str
    cost: Cost


@runtime_checkable
class LLM(Protocol):
    """A chat model. Keep leading messages stable between calls: backends reuse the prefix."""

    name: str  # e.g. "local:qwen2.5-coder-1.5b-instruct-q4_k_m", "openai:gpt-4o-mini"

    @property
    def supports_choices(self) -> bool:
        """Whether `choices` is enforced, not just passed along."""
        ...

    def complete(
        self,
        messages: list[Message],
        *,
        max_tokens: int = 64,
        stop: list[str] | None = None,
        choices: list[str] | None = None,
        more_lines: int = 0,
        temperature: float = 0.0,
        seed: int = 0,
        grammar: str | None = None,
    ) -> Completion: ...


def choice_grammar(choices: Sequence[str], more_lines: int = 0) -> str:
    """A GBNF grammar (llama.cpp) whose only sentences are the given strings, each followed by
    up to `more_lines` further lines of free text (a plan after its first action).

    The strings are laid out as a trie of words (`move` then `metal pot` ...), not as one
    alternative each: llama.cpp's sampler keeps a parse stack per alternative still open, and
    ScienceWorld offers thousands of actions, which as flat alternatives cost seconds a token."""
    if not choices or not all(isinstance(c, str) and c for c in choices):
        raise ValueError(f"choices must be a non-empty list of non-empty strings, got {choices!r}")
    if more_lines < 0:
        raise ValueError(f"more_lines must be 0 or more, got {more_lines}")
    rules = _trie_rules(dict.fromkeys(choices))
    first = rules[0].split(" ::= ", 1)[1]
    body = "".join(rule + "\n" for rule in rules[1:])
    if not more_lines:
        return f"root ::= {first}\n{body}"
    # Nested optionals rather than {0,m}: older llama.cpp servers parse them too.
    rest = ""
    for _ in range(more_lines):
        rest = f'("\\n" line {rest})?' if rest else '("\\n" line)?'
    return f"root ::= ({first}) {rest}\nline ::= [^\\n]+\n{body}"


# A word trie: each word -> (what may follow it, [whether a choice may end there]).
_TrieNode = dict[str, tuple["_TrieNode", list[bool]]]


def _trie_rules(choices: Iterable[str]) -> list[str]:
    """GBNF rules `t0 ::= ...` (the root first) of a word trie holding `choices`: each rule the
    words that may come next, each followed by the rule of what may follow it."""
    root: _TrieNode = {}
    for choice in choices:
        node, words = root, choice.split(" ")
        for index, word in enumerate(words):
            child = node.setdefault(word, ({}, [False]))
            if index == len(words) - 1:
                child[1][0] = True
            node = child[0]
    rules: list[str] = []

    def rule(node: _TrieNode) -> str:
        name = f"t{len(rules)}"
        rules.append("")
        alternatives = []
        for word, (child, ends) in node.items():
            if not child:
                alternatives.append(_gbnf_literal(word))
                continue
            after = f'" " {rule(child)}'
            alternatives.append(f"{_gbnf_literal(word)} ({after})" + ("?" if ends[0] else ""))
        rules[int(name[1:])] = f"{name} ::= " + " | ".join(alternatives)
        return name

    rule(root)
    return rules


def _gbnf_literal(text: str) -> str:
    out = []
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\x{ord(char):02x}")
        else:
            out.append(char)  # the GBNF parser reads UTF-8 literally
    return '"' + "".join(out) + '"'


def choice_token_budget(choices: Sequence[str], max_tokens: int) -> int:
    """Enough new tokens to finish the longest choice (a token is at least one character)."""
    return max(max_tokens, max(len(c) for c in choices) + 1)


def answer_limit(choices: Sequence[str] | None, max_tokens: int, more_lines: int = 0) -> int:
    """The most characters a backend returns for a request: the longest choice (and its
    decoration), or `_CHARS_PER_TOKEN` per requested token; both for a plan's free lines."""
    if choices and not more_lines:
        return max(len(c) for c in choices) + _CHOICE_DECORATION
    first = max(len(c) for c in choices) + _CHOICE_DECORATION if choices else 0
    return first + max(max_tokens, 1) * _CHARS_PER_TOKEN
