"""The JSON Lines format of `prag export` and `prag import`, and the checks a line must pass.

Each line is one object with a `kind`:

    {"kind": "run", ...RunRecord fields}
    {"kind": "episode", ...EpisodeRecord fields, "embeddings": {model: {hash: base64 float32}}}
    {"kind": "correction", ...Correction fields, "source_episode": {"run_id", "round", "task_id",
        "source"} or null, "embeddings": {...}}
    {"kind": "prior_load", "name", "digest", "loaded_at"}
    {"kind": "ask_policy", ...AskPolicyRecord fields, "model": base64 of the network's bytes}
    {"kind": "action_model", ...ActionModelRecord fields, "model": the learned model's JSON text}

Ids are the store's own and are not carried (nor an ask policy's or action model's version: an import
adds the next version of its name or family): a correction names the episode it corrects by that
episode's key (each task is played once per round of a run). Vectors are keyed by the sha256 of
their text and must belong to the line's own texts.

A line is checked whole before anything is written: at most `LINE_BYTES` long (read no further:
`read_lines`), JSON nested at most `MAX_DEPTH` deep (deeper JSON would exhaust Python's recursion in
the checks, and no record nests so), no text longer than `FIELD_CHARS` (but a network's or a learned
model's, which the line's bound bounds), every name a name (`prag.names`: a run id that would lead
out of `runs/`, a task id with ESC in it are bad lines), every field's type (strictly, by pydantic:
`"won": "no"` or `"round": "1"` are errors, not conversions), no unknown fields, steps numbered
0..n with the reset first, counts not negative, base64 that decodes to finite float32 vectors.
Whether vector dimensions agree is a question of the whole file and the store, so `LineChecker`
gives each line's dimensions for the importer to compare.
"""
from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any

import numpy as np
from pydantic import ConfigDict, TypeAdapter, ValidationError, with_config

from prag.envs.sam import ActionModel
from prag.names import name_problem
from prag.store.action_models import ActionModelRecord
from prag.store.ask_policies import AskPolicyRecord
from prag.store.corrections import ORIGINS, Correction, PriorLoad, correction_texts, read_transcript
from prag.store.records import STATUSES, EpisodeRecord, RunRecord, text_hash
from prag.store.transcripts import TranscriptError
from prag.text import clip

KINDS = ("run", "episode", "correction", "prior_load", "ask_policy", "action_model")
# The deepest a record nests is a step's triples in an episode's steps (4), or what a run's config
# or an episode's `extra` holds: a few levels more.
MAX_DEPTH = 32
# The longest line of a real export was an episode of 100 ScienceWorld steps with its vectors, 0.8 MB;
# its longest text a scene graph of 5 kB (and a transcript is at most 1 MiB: prag.store.transcripts).
LINE_BYTES = 16 * 2**20
FIELD_CHARS = 2**20
# The texts the line's bound alone bounds: an ask policy's network (base64), a learned action model's JSON.
_LONG_FIELDS = {"model"}
# The names on a line (prag.names), by kind: run ids name a folder (runs/<run id>/), the others are
# one line of text each.
_RUN_IDS = {"run": ("id", "include_runs"), "episode": ("run_id",), "action_model": ("run_id",)}
_NAMES = {
    "run": ("spec", "llm", "mode"),
    "episode": ("task_id", "task_type"),
    "correction": ("origin", "domain", "spec", "task_id", "task_type", "name", "improvement_model"),
    "prior_load": ("name",),
    "ask_policy": ("name", "spec", "llm", "algorithm", "tasks"),
    "action_model": ("family",),
}
SOURCES = ("agent", "correction")
_HASH = re.compile(r"[0-9a-f]{64}")


class BadLine(ValueError):
    """A line that does not fit the format; the message says what is wrong with it."""


def said(value: Any) -> str:
    """A value of a line as a message quotes it: its repr, cut (a field may hold a megabyte)."""
    return clip(repr(value), 60)


@with_config(ConfigDict(extra="forbid"))
@dataclass(frozen=True)
class EpisodeKey:
    """An episode named across stores: each task is played once per round of a run."""

    run_id: str
    round: int
    task_id: str
    source: str = "agent"

    @classmethod
    def of(cls, episode: EpisodeRecord) -> "EpisodeKey":
        """The key of a stored episode."""
        return cls(episode.run_id, episode.round, episode.task_id, episode.source)

    def describe(self) -> str:
        """The episode, as messages name it."""
        return f"task {self.task_id!r} of run {self.run_id!r} round {self.round} ({self.source})"


@dataclass
class Line:
    """One checked line: its record, the vectors it carries by model and hash, and (for a
    correction) the key of the episode it corrects."""

    kind: str
    record: RunRecord | EpisodeRecord | Correction | PriorLoad | AskPolicyRecord | ActionModelRecord
    embeddings: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    source_episode: EpisodeKey | None = None

    @property
    def dims(self) -> dict[str, set[int]]:
        """The sizes of the line's vectors, by model (all of a model's should have one size)."""
        return {model: {len(v) for v in vectors.values()} for model, vectors in self.embeddings.items() if vectors}


def utf8_line(raw: bytes) -> str:
    """A line read as bytes, as text; raises BadLine when it is not UTF-8."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadLine(f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})") from None


_ADAPTERS: dict[type, TypeAdapter[Any]] = {
    cls: TypeAdapter(cls) for cls in (RunRecord, EpisodeRecord, Correction, PriorLoad, EpisodeKey, AskPolicyRecord, ActionModelRecord)
}


def read_lines(handle: IO[bytes], limit: int = LINE_BYTES) -> Iterator[bytes]:
    """The lines of a file, none held longer than `limit` bytes and its line end: of a longer line
    the first bytes past the bound stand for it (`read_json` refuses it) and the rest is skipped
    unread, so that a line of 200 MB costs no more memory than one at the bound."""
    while line := handle.readline(limit + 2):
        if len(line) > limit + 1 and not line.endswith(b"\n"):
            while (rest := handle.readline(2**20)) and not rest.endswith(b"\n"):
                pass
        yield line


def read_json(text: str | bytes) -> Any:
    """The line's JSON value, nested at most `MAX_DEPTH` deep, no text in it over `FIELD_CHARS`;
    raises BadLine otherwise, and for a line over `LINE_BYTES` before reading it."""
    if len(text) > LINE_BYTES + 1:  # its line end aside
        raise BadLine(f"longer than {LINE_BYTES // 2**20} MiB, the most a line may be (no line of prag is near it): "
                      "is it the right file?")
    if isinstance(text, bytes):
        text = utf8_line(text)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadLine(f"not a JSON line ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise BadLine(f"JSON nested too deeply to be read (a line of prag nests at most {MAX_DEPTH} levels)") from None
    _check_shape(data)
    return data


def _check_shape(value: Any) -> None:
    """Refuse JSON nested past `MAX_DEPTH`, or with a text (or key) over `FIELD_CHARS` characters
    where a long one has no business. Walked without recursion: it may nest deeply."""
    stack: list[tuple[Any, int, str]] = [(value, 0, "")]
    while stack:
        item, level, where = stack.pop()
        if isinstance(item, str):
            if len(item) > FIELD_CHARS and where.rpartition(".")[2] not in _LONG_FIELDS:
                raise BadLine(f"{clip(where.lstrip('.'), 80) or 'line'}: a text of {len(item):,} characters, over the "
                              f"{FIELD_CHARS:,} a field may have")
            continue
        children = item.items() if isinstance(item, dict) else enumerate(item) if isinstance(item, list) else None
        if children is None:
            continue
        if level == MAX_DEPTH:
            raise BadLine(f"JSON nested more than {MAX_DEPTH} levels deep, deeper than any line of prag")
        for key, child in children:
            if isinstance(key, str) and len(key) > FIELD_CHARS:
                raise BadLine(f"{clip(where.lstrip('.'), 80) or 'line'}: a key of {len(key):,} characters, over the "
                              f"{FIELD_CHARS:,} a field may have")
            stack.append((child, level + 1, f"{where}[{key}]" if isinstance(key, int) else f"{where}.{key}"))


def parse_line(text: str | bytes) -> Line:
    """The line's record, checked; raises BadLine saying what is wrong."""
    data = read_json(text)
    if not isinstance(data, dict):
        raise BadLine(f"a line must be a JSON object, not {type(data).__name__}")
    kind = data.pop("kind", None)
    if kind not in KINDS:
        raise BadLine(f"unknown kind {said(kind)}: expected one of {', '.join(KINDS)}")
    embeddings = data.pop("embeddings", {}) if kind in ("episode", "correction") else {}
    source = data.pop("source_episode", None) if kind == "correction" else None
    _check_names(kind, data)
    if isinstance(source, dict):
        _check_names("episode", source, "source_episode.")
    if kind == "run":
        run = _typed(RunRecord, data)
        _check_run(run)
        return Line(kind, run)
    if kind == "episode":
        stated_actions = data.pop("n_actions", None)
        episode = _typed(EpisodeRecord, data)
        _check_episode(episode, stated_actions)
        texts = [episode.goal] + [step.scene for step in episode.steps]
        return Line(kind, episode, _vectors(embeddings, texts))
    if kind == "correction":
        correction = _typed(Correction, data)
        _check_correction(correction)
        key = None if source is None else _typed(EpisodeKey, source, "source_episode.")
        return Line(kind, correction, _vectors(embeddings, correction_texts(correction)), key)
    if kind == "ask_policy":
        return Line(kind, _ask_policy(data))
    if kind == "action_model":
        return Line(kind, _action_model(data))
    return Line(kind, _typed(PriorLoad, data))


def _check_names(kind: str, data: dict[str, Any], prefix: str = "") -> None:
    """Refuse a line whose names break their rules (prag.names); a field of another type is
    left to the type checks."""
    for fields, path in ((_RUN_IDS.get(kind, ()), True), (_NAMES.get(kind, ()), False)):
        for name in fields:
            value = data.get(name)
            for n, given in enumerate(value if isinstance(value, list) else [value]):
                if not isinstance(given, str):
                    continue
                problem = name_problem(given, path=path)
                if problem is not None:
                    where = f"{prefix}{name}" + (f"[{n}]" if isinstance(value, list) else "")
                    raise BadLine(f"{where}: {problem}" + (" (a run id names its folder under runs/)" if path else ""))


def _ask_policy(data: dict[str, Any]) -> AskPolicyRecord:
    """An ask policy line's record, every field checked, its network's base64 text decoded."""
    record: AskPolicyRecord = _typed(AskPolicyRecord, data)
    try:
        record.model = base64.b64decode(record.model, validate=True)
    except binascii.Error:
        raise BadLine("model: not base64") from None
    if not record.model:
        raise BadLine("model: empty")
    return record


def _action_model(data: dict[str, Any]) -> ActionModelRecord:
    """An action model line's record, its model JSON checked by reading it as a learned model."""
    record: ActionModelRecord = _typed(ActionModelRecord, data)
    try:
        ActionModel.from_json(record.model)
    except (ValueError, KeyError, TypeError) as exc:
        raise BadLine(f"model: not a learned action model ({exc})") from None
    return record


def _typed(cls: type, data: Any, prefix: str = "") -> Any:
    """`data` as a `cls`, every field of the right JSON type, no unknown and no missing fields."""
    try:
        return _ADAPTERS[cls].validate_json(json.dumps(data), strict=True)
    except ValidationError as exc:
        problems = [_problem(prefix, error) for error in exc.errors()]
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        raise BadLine("; ".join(problems[:3]) + more) from None


def _problem(prefix: str, error: Any) -> str:
    where = prefix + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in error["loc"]).lstrip(".")
    if error["type"] == "unexpected_keyword_argument":
        return f"{where}: unknown field"
    if error["type"] == "missing":
        return f"{where}: missing"
    got = json.dumps(error.get("input"))
    got = got if len(got) <= 40 else got[:37] + "..."
    return f"{where or 'line'}: {error['msg'].lower()}, got {got}"


def _check_run(run: RunRecord) -> None:
    if run.k < 0 or run.rounds < 0:
        raise BadLine(f"k and rounds must not be negative (k {run.k}, rounds {run.rounds})")
    if run.status not in STATUSES:
        raise BadLine(f"status: {said(run.status)} is not one of {', '.join(STATUSES)}")


def _check_episode(episode: EpisodeRecord, stated_actions: Any) -> None:
    if episode.round < 0:
        raise BadLine(f"round: {episode.round} is negative")
    if episode.source not in SOURCES:
        raise BadLine(f"source: {said(episode.source)} is not one of {', '.join(SOURCES)}")
    if not episode.steps:
        raise BadLine("steps: none (an episode has at least its reset step, t = 0)")
    for n, step in enumerate(episode.steps):
        if step.t != n:
            raise BadLine(f"steps[{n}].t: {step.t}, expected {n} (steps are numbered 0..n in order)")
        if (step.action is None) != (n == 0):
            raise BadLine(f"steps[{n}].action: " + ("the reset step has no action" if n == 0 else "missing"))
    if stated_actions is not None and stated_actions != episode.n_actions:
        raise BadLine(f"n_actions: {said(stated_actions)}, but the steps hold {episode.n_actions} actions")
    counts = ("seed", "llm_calls", "prompt_tokens", "cached_tokens", "completion_tokens", "reasks")
    for name in counts + ("seconds", "llm_seconds"):
        value = getattr(episode, name)
        if value < 0 or not math.isfinite(value):
            raise BadLine(f"{name}: {value} (must be a finite number, not negative)")
    if episode.shortest_path is not None and episode.shortest_path < 0:
        raise BadLine(f"shortest_path: {episode.shortest_path} is negative")


def _check_correction(correction: Correction) -> None:
    if correction.origin not in ORIGINS:
        raise BadLine(f"origin: {said(correction.origin)} is not one of {', '.join(ORIGINS)}")
    if not correction.instructions or not correction.transcript.strip():
        raise BadLine("a correction needs a transcript and at least one instruction (the goal)")
    if correction.origin == "prior" and not correction.name:
        raise BadLine("name: a prior transcript needs its name")
    try:
        read_transcript(correction)
    except TranscriptError as exc:
        raise BadLine(f"transcript: {exc}") from None


def _vectors(embeddings: Any, texts: list[str]) -> dict[str, dict[str, np.ndarray]]:
    """The line's vectors, decoded: base64 of float32, keyed by the hash of one of its texts."""
    if not isinstance(embeddings, dict):
        raise BadLine(f"embeddings: expected an object of models, got {type(embeddings).__name__}")
    own = {text_hash(text) for text in texts}
    decoded: dict[str, dict[str, np.ndarray]] = {}
    for model, vectors in embeddings.items():
        if not model or not isinstance(vectors, dict):
            raise BadLine(f"embeddings.{model}: expected an object of hash: base64 vector")
        for digest, encoded in vectors.items():
            where = f"embeddings.{model}.{digest[:12]}"
            if not _HASH.fullmatch(digest) or digest not in own:
                raise BadLine(f"{where}: not the sha256 of one of this line's texts")
            try:
                raw = base64.b64decode(encoded, validate=True) if isinstance(encoded, str) else None
            except (binascii.Error, ValueError):
                raw = None
            if raw is None or not raw or len(raw) % 4:
                raise BadLine(f"{where}: not base64 of float32 numbers")
            vector = np.frombuffer(raw, dtype=np.float32)
            if not np.isfinite(vector).all():
                raise BadLine(f"{where}: holds NaN or infinite numbers")
            decoded.setdefault(model, {})[digest] = vector
    return decoded


def encode(kind: str, data: dict[str, Any], embeddings: dict[str, dict[str, np.ndarray]] | None = None) -> str:
    """One line of `kind`: the record's fields (`data`), and its vectors in base64 when given."""
    line = {"kind": kind, **data}
    if embeddings is not None:
        line["embeddings"] = {
            model: {digest: _b64(vector) for digest, vector in sorted(vectors.items())}
            for model, vectors in sorted(embeddings.items())
        }
    return json.dumps(line, sort_keys=True)


def _b64(vector: np.ndarray) -> str:
    return base64.b64encode(np.asarray(vector, dtype=np.float32).tobytes()).decode("ascii")
