"""How an ALFWorld game's goal is worded for the agent: the spec parameter `goals`.

The game's PDDL goal (what wins) never changes; only the sentence the agent is given does.

    goals = "template"   # ALFWorld's own sentence, "put a clean bowl in cabinet." (the default)
    goals = "turk"       # one of ALFRED's crowd annotations of the game (traj_data.json), chosen
                         # with the spec's seed: "Put a clean bowl in a cabinet."
    goals = "people"     # one of prag's own crowd-style phrasings of the game's goal, chosen with
                         # the seed: "Rinse the bowl and put it away in the cupboard."
    goals = { file = "$ALFWORLD_COMMANDS", field = "refined" }
                         # a Revisiting ALFRED commands file (Jang et al., GenPlan @ AAAI 2025):
                         # entries keyed by the trial folder's name; field one of FIELDS; the
                         # path may name environment variables and is relative to the spec's folder

Every wording is read from the trial folder (`traj_data.json`), so real and generated games are
worded the same way.
"""
from __future__ import annotations

import json
import os
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prag.errors import SpecError
from prag.files import checked_file, read_text

FIELDS = ("refined", "paraphras1_command", "paraphras2_command", "contextual_command", "korean_command")
NAMED = ("template", "turk", "people")

# prag's crowd-style phrasings, a few per task type, written for prag (no text of ALFRED's splits).
# The last of each leaves the place unsaid, as people do ("put the mug away"): only the room and
# experience can say where it goes.
# {obj}/{objs}/{recep}/{lamp} are filled with everyday words for the game's kinds.
PHRASINGS: dict[str, tuple[str, ...]] = {
    "pick_and_place_simple": (
        "Put a {obj} on the {recep}.",
        "Move the {obj} to the {recep}.",
        "Take a {obj} and leave it in the {recep}.",
        "Place the {obj} in the {recep}.",
        "Put the {obj} away.",
    ),
    "look_at_obj_in_light": (
        "Look at the {obj} under the {lamp}.",
        "Pick up the {obj} and turn on the {lamp}.",
        "Examine a {obj} by the light of the {lamp}.",
        "Hold the {obj} and switch on the lamp.",
        "Check the {obj} under a lamp.",
    ),
    "pick_clean_then_place_in_recep": (
        "Rinse a {obj} and put it on the {recep}.",
        "Put a washed {obj} in the {recep}.",
        "Clean the {obj}, then place it in the {recep}.",
        "Wash off the {obj} and leave it on the {recep}.",
        "Wash the {obj} and put it away.",
    ),
    "pick_heat_then_place_in_recep": (
        "Heat up a {obj} and put it in the {recep}.",
        "Put a warm {obj} on the {recep}.",
        "Microwave the {obj}, then set it on the {recep}.",
        "Place a heated {obj} in the {recep}.",
        "Warm the {obj} up and put it back.",
    ),
    "pick_cool_then_place_in_recep": (
        "Chill a {obj} and put it on the {recep}.",
        "Put a cold {obj} in the {recep}.",
        "Cool down the {obj}, then place it in the {recep}.",
        "Leave a chilled {obj} on the {recep}.",
        "Chill the {obj} and put it away.",
    ),
    "pick_two_obj_and_place": (
        "Put two {objs} in the {recep}.",
        "Move both {objs} to the {recep}.",
        "Place a pair of {objs} on the {recep}.",
        "Gather two {objs} and put them in the {recep}.",
        "Put both {objs} away.",
    ),
}

# Everyday words for kinds whose ALFRED names people seldom say.
EVERYDAY = {
    "fridge": "refrigerator", "garbagecan": "trash can", "countertop": "counter", "cabinet": "cupboard",
    "sinkbasin": "sink", "diningtable": "table", "sidetable": "side table", "coffeemachine": "coffee maker",
    "desklamp": "desk lamp", "floorlamp": "floor lamp", "alarmclock": "alarm clock", "cellphone": "phone",
    "remotecontrol": "remote", "creditcard": "credit card", "butterknife": "butter knife",
    "soapbar": "bar of soap", "soapbottle": "soap bottle", "spraybottle": "spray bottle",
    "dishsponge": "sponge", "tissuebox": "tissue box", "toiletpaper": "toilet paper roll",
    "toiletpaperhanger": "toilet paper holder", "winebottle": "wine bottle", "saltshaker": "salt shaker",
    "peppershaker": "pepper shaker", "keychain": "key chain", "baseballbat": "baseball bat",
    "tennisracket": "tennis racket", "wateringcan": "watering can", "houseplant": "plant",
    "handtowel": "hand towel", "handtowelholder": "towel rack", "towelholder": "towel rack",
    "coffeetable": "coffee table", "stoveburner": "stove", "bathtubbasin": "bathtub", "armchair": "armchair",
    "glassbottle": "glass bottle", "papertowelroll": "paper towel roll", "laundryhamper": "laundry basket",
}


@dataclass(frozen=True)
class Wording:
    """Which sentence a game's goal is given in."""

    name: str  # "template", "turk", "people", or a commands file's field
    file: Path | None = None  # the commands file, for a field
    seed: int = 0

    def describe(self) -> str:
        return f"{self.name} ({self.file.name})" if self.file else self.name


COMMANDS_FILE = "a Revisiting ALFRED commands file (JSON)"


def parse_wording(value: Any, spec_dir: Path, seed: int) -> Wording:
    """The `goals` param of a spec: a name, or a table {file, field}."""
    if value is None or value in NAMED:
        return Wording(value or "template", seed=seed)
    if isinstance(value, dict):
        unknown = sorted(set(value) - {"file", "field"})
        file, field = value.get("file"), value.get("field")
        if unknown or not isinstance(file, str) or field not in FIELDS:
            raise SpecError(
                f"goals: a commands file is given as {{ file = \"PATH\", field = \"NAME\" }} with field one of "
                f"{', '.join(FIELDS)}; got {value!r}"
            )
        path = (spec_dir / Path(os.path.expandvars(file)).expanduser()).resolve()
        if not path.exists():
            unset = f" ({file} names an environment variable that is not set)" if "$" in str(path) else ""
            raise SpecError(f"goals: no commands file at {path}{unset}: give the path of a Revisiting ALFRED commands JSON file")
        return Wording(field, checked_file(path, COMMANDS_FILE, SpecError), seed)
    raise SpecError(
        f"goals must be one of {', '.join(repr(n) for n in NAMED)} or {{ file = \"PATH\", field = \"NAME\" }}; got {value!r}"
    )


def instructions(wording: Wording, trials: dict[str, Path]) -> dict[str, str]:
    """The sentence each game is given in, by task id (`trials`: task id -> trial folder);
    empty for the template wording (each game then gives its own)."""
    if wording.name == "template":
        return {}
    commands = _commands(wording.file) if wording.file else {}
    worded = {}
    for task_id, trial in trials.items():
        chooser = random.Random(f"{wording.seed}:{task_id}")
        if wording.file:
            entry = commands.get(trial.name)
            if entry is None or not isinstance(entry.get(wording.name), str):
                raise SpecError(
                    f"goals: {wording.file} has no {wording.name!r} command for the game {task_id}; "
                    "use the commands file of this split, or choose the games with task_types/num_tasks"
                )
            text = entry[wording.name]
        elif wording.name == "turk":
            text = chooser.choice(_annotations(trial))
        else:
            text = _phrasing(_traj(trial), chooser)
        worded[task_id] = " ".join(text.split())
    return worded


def _phrasing(traj: dict[str, Any], chooser: random.Random) -> str:
    params = traj.get("pddl_params") or {}
    words = {slot: _everyday(str(params.get(key, "")).lower())
             for slot, key in (("obj", "object_target"), ("recep", "parent_target"), ("lamp", "toggle_target"))}
    words["objs"] = _plural(words["obj"])
    text = chooser.choice(PHRASINGS[traj["task_type"]]).format(**words)
    return re.sub(r"\b([Aa]) (?=[aeiou])", r"\1n ", text)  # "a egg" -> "an egg"


def _everyday(kind: str) -> str:
    from prag.envs.alfworld.goals import schema

    if kind in EVERYDAY:
        return EVERYDAY[kind]
    spoken = schema().spoken().get(kind, ())
    return spoken[0] if spoken else kind


def _plural(words: str) -> str:
    head, of, tail = words.partition(" of ")  # "bar of soap" -> "bars of soap"
    if head.endswith("fe"):
        head = head[:-2] + "ve"
    elif head.endswith(("s", "x", "ch", "sh", "o")):
        head += "e"
    return f"{head}s{of}{tail}"


def _annotations(trial: Path) -> list[str]:
    anns = (_traj(trial).get("turk_annotations") or {}).get("anns") or []
    texts = [a["task_desc"] for a in anns if isinstance(a, dict) and isinstance(a.get("task_desc"), str)]
    if not texts:
        raise SpecError(f"goals = \"turk\": {trial / 'traj_data.json'} has no crowd annotation; use goals = \"template\"")
    return texts


def _traj(trial: Path) -> dict[str, Any]:
    path = trial / "traj_data.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SpecError(f"{path}: not a readable JSON file ({exc}); re-download or re-unpack the data") from None
    if not isinstance(data, dict) or data.get("task_type") not in PHRASINGS:
        raise SpecError(f"{path}: no ALFWorld task_type; re-download or re-unpack the data")
    return data


def _commands(path: Path) -> dict[str, dict[str, Any]]:
    text = read_text(path, COMMANDS_FILE, SpecError)
    try:
        entries = json.loads(text)
    except ValueError as exc:
        raise SpecError(f"goals: {path} is not a readable JSON file ({exc}); give a Revisiting ALFRED commands file") from None
    if not isinstance(entries, list) or not all(isinstance(e, dict) and isinstance(e.get("task_id"), str) for e in entries):
        raise SpecError(f"goals: {path} is not a Revisiting ALFRED commands file: expected a list of entries with a task_id")
    return {e["task_id"]: e for e in entries}
