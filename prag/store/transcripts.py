"""Episodes as transcripts of an emulated Python console, and reading such transcripts back.

After Bärmann et al. (2024), an interaction is what a Python console would show: the robot's
calls after `>>> ` and their results on the lines below; a person's utterances are results of
`wait_for_trigger()`. One episode reads:

    >>> wait_for_trigger()
    {'type': 'dialog', 'text': 'put a candle in shelf.'}
    >>> observe()
    You are in the middle of a room. Looking quickly around you, you see a drawer 1, a shelf 1.
    >>> act("go to drawer 1")
    You arrive at drawer 1. The drawer 1 is closed.
    >>> wait_for_trigger()
    {'type': 'dialog', 'text': 'the candle is in the drawer: open it'}
    >>> act("open drawer 1")
    You open the drawer 1. The drawer 1 is open. In it, you see a candle 1.

Transcripts come from people, from LLMs and from imported files, so reading one never evaluates
it: each statement is parsed with `ast` and must be one call of the API below with string
literals as arguments; a dialog result is read with `ast.literal_eval` (literals only). Reading
is bounded, so that no text can exhaust the parser (`MAX_CHARS`, `MAX_TOKENS`). Anything else
is a `TranscriptError` that says which line and why. The store reads a correction's transcript
before it keeps one (`prag.store.corrections`), which is why this format lives in the store.
"""
from __future__ import annotations

import ast
import io
import itertools
import tokenize
from dataclasses import dataclass, field

from prag.errors import PragError
from prag.store.records import EpisodeRecord
from prag.text import clip

PROMPT = ">>> "
CONTINUATION = "... "

# The console API: each call's number of (string) arguments, and what it does.
API: dict[str, tuple[int, str]] = {
    "wait_for_trigger": (0, "wait for the person; returns {'type': 'dialog', 'text': ...}"),
    "observe": (0, "what the robot sees when the task begins"),
    "act": (1, "do one action of the environment, e.g. act(\"go to fridge 1\"); returns what happens"),
    "say": (1, "say something to the person; returns nothing"),
    "learn_from_interaction": (0, "learn from the interaction so far (right after a person's feedback)"),
}
HAS_RESULT = {"wait_for_trigger", "observe", "act"}

# CPython's parser recurses on nesting: `act('a'+'a'+...)` with 200,000 terms, or 200,000 unary
# minus signs, end in RecursionError or MemoryError inside `ast`. A statement of the API is a
# name, two parentheses and a string literal (a few pieces at most), a dialog result a dict of
# two items: some ten tokens. Past `MAX_TOKENS` a text never reaches `ast`, which bounds both its
# terms and its depth. A transcript of a few hundred steps is some 100 kB: `MAX_CHARS` is far
# past any, and keeps a stray file or a runaway answer from being read line by line.
MAX_TOKENS = 64
MAX_CHARS = 2**20


class TranscriptError(PragError):
    """A transcript that is not a console transcript of prag's API."""


@dataclass(frozen=True)
class Entry:
    """One console statement and its result (for `wait_for_trigger`, the utterance's text)."""

    call: str
    args: tuple[str, ...] = ()
    result: str | None = None

    @classmethod
    def utterance(cls, text: str) -> Entry:
        return cls("wait_for_trigger", (), text)

    @classmethod
    def action(cls, action: str, observation: str) -> Entry:
        return cls("act", (action,), observation)

    @property
    def is_utterance(self) -> bool:
        return self.call == "wait_for_trigger"


@dataclass(frozen=True)
class Transcript:
    entries: tuple[Entry, ...] = field(default_factory=tuple)

    @property
    def instructions(self) -> list[str]:
        """What the person said, in order: the request (goal) first, then any feedback."""
        return [e.result or "" for e in self.entries if e.is_utterance]

    @property
    def goal(self) -> str:
        said = self.instructions
        return said[0] if said else ""

    @property
    def actions(self) -> list[str]:
        return [e.args[0] for e in self.entries if e.call == "act"]

    def statements(self) -> list[tuple[str, tuple[str, ...]]]:
        """The calls without their results: what the robot and the person did, not what followed."""
        return [(e.call, e.args) for e in self.entries]

    def then(self, *entries: Entry) -> Transcript:
        return Transcript(self.entries + tuple(entries))

    def without_learning(self) -> Transcript:
        return Transcript(tuple(e for e in self.entries if e.call != "learn_from_interaction"))

    def render(self, observation_chars: int | None = None) -> str:
        return render(self, observation_chars)


# --- writing ------------------------------------------------------------------------------------


def statement(entry: Entry) -> str:
    return f"{entry.call}({', '.join(_quote(a) for a in entry.args)})"


def _quote(text: str) -> str:
    # Double quotes read best for actions; repr's escaping keeps any text a valid literal.
    if '"' not in text and "\\" not in text and text.isprintable():
        return f'"{text}"'
    return repr(text)


def render(transcript: Transcript, observation_chars: int | None = None) -> str:
    """The console text; observations longer than `observation_chars` are shortened (prompts)."""
    lines: list[str] = []
    for entry in transcript.entries:
        lines.append(PROMPT + statement(entry))
        if entry.is_utterance:
            lines.append(repr({"type": "dialog", "text": entry.result or ""}))
        elif entry.result:
            text = entry.result.strip()
            if observation_chars is not None and len(text) > observation_chars:
                text = text[: observation_chars - 3].rstrip() + "..."  # never a line of its own
            for line in text.splitlines():
                if line.startswith((PROMPT.rstrip(), CONTINUATION.rstrip())):
                    raise TranscriptError(
                        f"the result of {statement(entry)} has a line starting with '>>>' or '...', "
                        "which a console transcript cannot hold"
                    )
                lines.append(line)
    return "\n".join(lines) + "\n"


def from_episode(episode: EpisodeRecord) -> Transcript:
    """An episode as the console saw it: the goal as the person's request, the first observation,
    then every action and its observation, with the person's utterances where they were said
    (`extra.utterances`: (t, text), said after step t's observation)."""
    said: dict[int, list[str]] = {}
    for t, text in episode.extra.utterances:
        said.setdefault(t, []).append(text)
    entries = [Entry.utterance(episode.goal)]
    for step in episode.steps:
        if step.action is None:
            entries.append(Entry("observe", (), step.observation.strip()))
        else:
            entries.append(Entry.action(step.action, step.observation.strip()))
        entries += [Entry.utterance(text) for text in said.get(step.t, [])]
    return Transcript(tuple(entries))


# --- reading ------------------------------------------------------------------------------------


def parse(text: str, *, comments: bool = False) -> Transcript:
    """Read a console transcript; raises `TranscriptError` on anything but prag's API. With
    `comments`, lines starting with `#` are left out (an editor's notes) and the others keep
    their numbers, so that errors name the lines of the text as it was given."""
    if len(text) > MAX_CHARS:
        raise TranscriptError(
            f"the transcript is {len(text):,} characters long, over the {MAX_CHARS:,} a transcript may have: "
            "give the console transcript of one task"
        )
    numbered = [
        (number, line)
        for number, line in enumerate(text.replace("\r\n", "\n").split("\n"), start=1)
        if not (comments and line.startswith("#"))
    ]
    entries: list[Entry] = []
    i = 0
    while i < len(numbered):
        number, line = numbered[i]
        if not line.strip():
            i += 1
            continue
        if not line.startswith(PROMPT.rstrip()):
            raise TranscriptError(
                f"line {number}: {line[:60]!r} comes before any `>>> ` statement; a transcript "
                "starts with a `>>> ` line"
            )
        source = [line[len(PROMPT):] if line.startswith(PROMPT) else line[len(PROMPT) - 1:]]
        i += 1
        while i < len(numbered) and numbered[i][1].startswith(CONTINUATION.rstrip()):
            source.append(numbered[i][1][len(CONTINUATION):])
            i += 1
        output: list[str] = []
        while i < len(numbered) and not numbered[i][1].startswith(PROMPT.rstrip()):
            output.append(numbered[i][1])
            i += 1
        call, args = _read_statement("\n".join(source), number)
        entries.append(_entry(call, args, "\n".join(output).strip(), number))
    return Transcript(tuple(entries))


def _bounded_tree(source: str, what: str, mode: str) -> ast.AST:
    """`source` parsed by `ast` once it is known to be short: `TranscriptError` past `MAX_TOKENS`
    tokens (`what` names it), SyntaxError as `ast` raises it."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    try:
        counted = sum(1 for _ in itertools.islice(tokens, MAX_TOKENS + 1))
    except (tokenize.TokenError, SyntaxError):
        counted = 0  # a string or bracket left open within the bound: `ast` says where
    if counted > MAX_TOKENS:
        raise TranscriptError(
            f"{what} is too long or too deeply nested (over {MAX_TOKENS} tokens; a call of the console "
            "API has about ten): write one call with string literals"
        )
    return ast.parse(source, mode=mode)


def _read_statement(source: str, line: int) -> tuple[str, tuple[str, ...]]:
    where = f"line {line}: `{clip(source, 80)}`"  # on one line: a statement may run on over `... ` lines
    try:
        tree = _bounded_tree(source, where, "exec")
    except SyntaxError as exc:
        raise TranscriptError(f"{where} is not a Python statement ({exc.msg})") from None
    assert isinstance(tree, ast.Module)
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr):
        raise TranscriptError(f"{where}: only single calls of {_api_names()} are allowed")
    node = tree.body[0].value
    if not isinstance(node, ast.Call):
        raise TranscriptError(f"{where}: only calls of {_api_names()} are allowed")
    if not isinstance(node.func, ast.Name):
        kind = "attribute access" if isinstance(node.func, ast.Attribute) else "a computed function"
        raise TranscriptError(f"{where}: {kind} is not allowed; call one of {_api_names()} by name")
    name = node.func.id
    if name.startswith("__") or name not in API:
        raise TranscriptError(f"{where}: {name!r} is not part of the console API; use one of {_api_names()}")
    if node.keywords:
        raise TranscriptError(f"{where}: keyword arguments are not allowed; give {name}() its arguments by position")
    args: list[str] = []
    for arg in node.args:
        if not isinstance(arg, ast.Constant) or not isinstance(arg.value, str):
            raise TranscriptError(f"{where}: the arguments of {name}() must be string literals")
        args.append(arg.value)
    wanted = API[name][0]
    if len(args) != wanted:
        raise TranscriptError(f"{where}: {name}() takes {wanted} argument(s), got {len(args)}")
    return name, tuple(args)


def _entry(call: str, args: tuple[str, ...], output: str, line: int) -> Entry:
    if call == "wait_for_trigger":
        return Entry.utterance(_read_dialog(output, line))
    if call not in HAS_RESULT and output:
        raise TranscriptError(f"line {line}: {call}() returns nothing, but a result follows it: {output[:60]!r}")
    return Entry(call, args, output if call in HAS_RESULT else None)


def _read_dialog(output: str, line: int) -> str:
    where = f"the result of wait_for_trigger() on line {line}"
    try:
        value = ast.literal_eval(_bounded_tree(output, where, "eval"))  # literals only: no names, calls or attributes
    except (ValueError, SyntaxError, TypeError):
        raise TranscriptError(
            f"{where} must be a literal like {{'type': 'dialog', 'text': '...'}}, got {output[:80]!r}"
        ) from None
    if not isinstance(value, dict) or value.get("type") != "dialog" or not isinstance(value.get("text"), str):
        raise TranscriptError(f"{where} must be {{'type': 'dialog', 'text': '...'}}, got {output[:80]!r}")
    if set(value) != {"type", "text"}:
        raise TranscriptError(f"{where} has keys other than 'type' and 'text': {sorted(value)}")
    return value["text"]


def _api_names() -> str:
    return ", ".join(f"{name}()" for name in API)


def api_help() -> str:
    """The console API, one call a line (for prompts)."""
    return "\n".join(f"- {name}({', '.join(['...'] * n)}): {what}" for name, (n, what) in API.items())


def extract(answer: str) -> str:
    """The console part of an LLM's answer: the first code block holding a `>>> ` line, or
    else everything from the first `>>> ` line on; it ends at a `learn_from_interaction()` call,
    where the transcript asked for improvement (small models go on writing prose after it)."""
    lines = answer.replace("\r\n", "\n").split("\n")
    fences = [i for i, line in enumerate(lines) if line.strip().startswith("```")]
    for start, end in zip(fences[::2], fences[1::2]):
        block = lines[start + 1 : end]
        if any(line.startswith(PROMPT.rstrip()) for line in block):
            return extract("\n".join(block))
    for start, line in enumerate(lines):
        if line.startswith(PROMPT.rstrip()):
            console = [line for line in lines[start:] if not line.strip().startswith("```")]
            learning = next((i for i, line in enumerate(console) if line.startswith(LEARNING_CALL)), len(console))
            return "\n".join(console[: learning + 1])
    raise TranscriptError("the answer holds no console transcript: no line starts with '>>> '")


LEARNING_CALL = PROMPT + "learn_from_interaction("
