"""The grid's formal goals: its five tasks, each with the list of things it names (or, for the
plants, how many), written as the tasks write their goals (`prag.envs.grid.tasks`).

The canonical sentences are the tasks' own, lower case and without the full stop, so the
family's `GoalTemplate`s (`Domain.needs`) and the action model (`prag.envs.grid.model`) read
a reading as they read a task's goal. A task's furniture is fixed by its sentence (groceries go
in the fridge, trash in the bin), so the slots are only the things: `groceries`, `trash`, `toys`
and `dishes` are lists of the task's kinds (`objects.py`), and `plants` is how many plants the
sentence names ("the plant" or "all 2 plants": the houses have one or two).
"""
from __future__ import annotations

from functools import cache
from itertools import product

from prag.envs.goals import GoalSchema
from prag.envs.grid.house import listing
from prag.envs.grid.tasks.dishes import DISHES
from prag.envs.grid.tasks.groceries import GROCERIES
from prag.envs.grid.tasks.toys import TOYS
from prag.envs.grid.tasks.trash import TRASH

TEMPLATES = {
    "put_away_groceries": "put away the groceries: put {groceries} in the fridge, then close the fridge",
    "throw_away_trash": "throw away the trash: put {trash} in the bin, and nothing else",
    "collect_toys": "collect the toys: put {toys} in the box",
    "wash_dishes": "wash the dishes: clean {dishes} at the sink, put them in the cabinet, then turn the sink off",
    "water_plants": "water {plants} with the watering can, filled at the sink, then turn the sink off",
}
PLANTS = ("the plant", "all 2 plants")  # tasks/plants.py: a house has one plant or two

# Kinds as people name them; plurals ("apples") are read as their kinds without a word here.
SPOKEN = {
    "eggs": ("egg",),
    "milk": ("milk carton", "carton of milk"),
    "bread": ("loaf", "loaf of bread"),
    "soda can": ("can", "soda", "can of soda"),
    "banana peel": ("banana skin", "peel"),
    "newspaper": ("paper",),
    "teddy bear": ("teddy",),
    "toy car": ("car",),
    "block": ("toy block", "building block"),
    "cup": ("mug",),
    "the plant": ("plant", "one plant"),
    "all 2 plants": ("both plants", "both the plants", "both of the plants", "two plants", "2 plants"),
}


def _phrasings(*parts: str | tuple[str, ...]) -> tuple[str, ...]:
    """Every sentence made of one wording of each part, in order ("put "/"stick ", "{groceries}", ...)."""
    return tuple("".join(words) for words in product(*[(p,) if isinstance(p, str) else p for p in parts]))


# A task's goal as people put it, read as its canonical sentence (what the furniture is called,
# what is done with it); the task's furniture is the one its sentence names.
ALIASES = {
    "put_away_groceries": _phrasings(("put ", "stick "), "{groceries}", ("", " away"), " in the ",
                                     ("fridge", "refrigerator"), (" and close it", " and shut it", ", then close it")),
    "throw_away_trash": _phrasings(("put ", "throw ", "toss "), "{trash}", ("", " away"), " in the ",
                                   ("bin", "trash can", "trash", "garbage can", "trash bin")),
    "collect_toys": _phrasings(("put ", "collect "), "{toys}", ("", " away"), (" in the ", " into the "),
                               ("box", "toy box")),
    "wash_dishes": _phrasings(("wash ", "clean "), "{dishes}", (" and put them", " and put it"), " in the ",
                              ("cabinet", "cupboard"), ("", " and turn off the sink", ", then turn the sink off")),
    "water_plants": _phrasings("water {plants}", ("", " with the watering can"),
                               ("", " and turn off the sink", ", then turn the sink off")),
}

# How people's words read as goals, one of each task (written for prag; no particular house).
EXAMPLES = (
    ("Stick the milk and eggs in the fridge and shut it.",
     "put away the groceries: put the milk and the eggs in the fridge, then close the fridge"),
    ("Chuck the soda cans and the old newspaper in the trash.",
     "throw away the trash: put the soda can and the newspaper in the bin, and nothing else"),
    ("Tidy the teddy and the toy cars away into the toy box.",
     "collect the toys: put the teddy bear and the toy car in the box"),
    ("Rinse the cups and plates and put them in the cupboard.",
     "wash the dishes: clean the cup and the plate at the sink, put them in the cabinet, then turn the sink off"),
    ("Give both plants some water, and don't leave the tap running.",
     "water all 2 plants with the watering can, filled at the sink, then turn the sink off"),
)

SLOT_WORDS = (
    "with {groceries}, {trash}, {toys} and {dishes} the things the instruction names, each one of the task's "
    "kinds, written 'the milk, the butter and the eggs', and {plants} 'the plant' or 'all 2 plants'"
)
READING_RULES = (
    "Use 'put away the groceries' for food that goes in the fridge, 'throw away the trash' for rubbish that "
    "goes in the bin, 'collect the toys' for toys that go in the box, 'wash the dishes' for plates and cups to "
    "wash and put in the cabinet, and 'water' for plants. Name every thing the instruction names, and no other."
)


def _kinds() -> dict[str, list[str]]:
    return {"groceries": list(GROCERIES), "trash": list(TRASH), "toys": list(TOYS), "dishes": list(DISHES),
            "plants": list(PLANTS)}


@cache
def schema() -> GoalSchema:
    lists = {slot: listing for slot in ("groceries", "trash", "toys", "dishes")}
    # A win bears a reading out when it ends at the task's furniture: closing the fridge, the last
    # drop in the bin, the box or the cabinet (or turning off the sink), watering the last plant.
    finishing = {"put_away_groceries": ("fridge",), "throw_away_trash": ("bin",), "collect_toys": ("box",),
                 "wash_dishes": ("cabinet", "sink"), "water_plants": ("plant", "sink")}
    return GoalSchema(TEMPLATES, _kinds, aliases=ALIASES, spoken=lambda: SPOKEN, examples=EXAMPLES,
                      finishing=finishing, lists=lists, slot_words=SLOT_WORDS, reading_rules=READING_RULES)
