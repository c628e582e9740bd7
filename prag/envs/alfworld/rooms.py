"""Household vocabularies for generated ALFWorld rooms: which furniture and things each room holds.

What may hold what, which objects can be heated/cooled/cleaned, which receptacles open and which
task types ALFRED stages in which room all come from ALFWorld's own tables
(`alfworld.gen.constants`); this module only says what is typical of each kind of room.
"""
from __future__ import annotations

from dataclasses import dataclass

from alfworld.gen import constants

# The receptacle an action needs (the domain's CleanObject/HeatObject/CoolObject preconditions).
APPLIANCE: dict[str, str] = {
    "pick_clean_then_place_in_recep": "SinkBasin",
    "pick_heat_then_place_in_recep": "Microwave",
    "pick_cool_then_place_in_recep": "Fridge",
}
# The object property the goal formula asks for (`(heatable ?o)` etc.).
PROPERTY: dict[str, str] = {
    "pick_clean_then_place_in_recep": "Cleanable",
    "pick_heat_then_place_in_recep": "Heatable",
    "pick_cool_then_place_in_recep": "Coolable",
}
LAMP = "DeskLamp"
# Sinks and bathtubs are an object (the fixture) plus a basin receptacle, as in ALFRED scenes.
BASIN_FIXTURE: dict[str, str] = {"SinkBasin": "Sink", "BathtubBasin": "Bathtub"}


@dataclass(frozen=True)
class Room:
    """A kind of room: receptacle types with how many of each it may have, and its small objects."""

    name: str
    receptacles: dict[str, int]  # receptacle type -> most instances in one room
    objects: tuple[str, ...]
    lamp_holders: tuple[str, ...] = ()  # where a desk lamp may stand (look_at_obj_in_light)


ROOMS: dict[str, Room] = {
    room.name: room
    for room in (
        Room(
            "Kitchen",
            {
                "CounterTop": 2, "Cabinet": 8, "Drawer": 4, "Fridge": 1, "Microwave": 1, "SinkBasin": 1,
                "StoveBurner": 4, "DiningTable": 1, "CoffeeMachine": 1, "Toaster": 1, "GarbageCan": 1,
                "Shelf": 2,
            },
            (
                "Apple", "Bread", "Bowl", "ButterKnife", "Cup", "DishSponge", "Egg", "Fork", "Kettle",
                "Knife", "Ladle", "Lettuce", "Mug", "Pan", "PepperShaker", "Plate", "Pot", "Potato",
                "SaltShaker", "SoapBottle", "Spatula", "Spoon", "Tomato", "WineBottle",
            ),
        ),
        Room(
            "LivingRoom",
            {
                "Sofa": 1, "ArmChair": 2, "CoffeeTable": 1, "SideTable": 2, "TVStand": 1, "Drawer": 4,
                "Cabinet": 4, "Shelf": 3, "GarbageCan": 1, "Ottoman": 1, "DiningTable": 1, "Dresser": 1,
                "Safe": 1,
            },
            (
                "Book", "Box", "CellPhone", "CreditCard", "KeyChain", "Laptop", "Newspaper", "Pillow",
                "RemoteControl", "Statue", "Vase", "Watch", "TissueBox", "Candle",
            ),
            lamp_holders=("SideTable", "Dresser"),
        ),
        Room(
            "Bedroom",
            {
                "Bed": 1, "Desk": 1, "SideTable": 2, "Dresser": 1, "Drawer": 6, "Shelf": 4,
                "GarbageCan": 1, "LaundryHamper": 1, "ArmChair": 1, "Safe": 1,
            },
            (
                "AlarmClock", "BaseballBat", "BasketBall", "Book", "CD", "CellPhone", "CreditCard",
                "KeyChain", "Laptop", "Mug", "Pen", "Pencil", "Pillow", "TennisRacket", "Watch", "Bowl",
                "Cloth",
            ),
            lamp_holders=("Desk", "SideTable", "Dresser"),
        ),
        Room(
            "Bathroom",
            {
                "Toilet": 1, "SinkBasin": 2, "BathtubBasin": 1, "CounterTop": 1, "Cabinet": 4,
                "Drawer": 4, "TowelHolder": 1, "HandTowelHolder": 1, "ToiletPaperHanger": 1,
                "GarbageCan": 1, "Shelf": 2,
            },
            (
                "Candle", "Cloth", "DishSponge", "HandTowel", "PaperTowel", "Plunger", "SoapBar",
                "SoapBottle", "SprayBottle", "TissueBox", "ToiletPaper", "Towel",
            ),
        ),
    )
}


def can_contain(receptacle: str, obj: str) -> bool:
    return obj in constants.VAL_RECEPTACLE_OBJECTS.get(receptacle, ())


def has_property(obj: str, prop: str) -> bool:
    return obj in constants.VAL_ACTION_OBJECTS[prop]


def is_openable(receptacle: str) -> bool:
    return receptacle in constants.OPENABLE_CLASS_SET


def rooms_for(task_type: str) -> list[Room]:
    """The rooms ALFRED stages this task type in (constants.GOALS_VALID), in a fixed order."""
    return [room for name, room in ROOMS.items() if name in constants.GOALS_VALID[task_type]]


def object_types() -> list[str]:
    """Every object type of ALFRED (the `otype` constants a real problem declares), sorted."""
    static = set(constants.RECEPTACLES) - set(constants.MOVABLE_RECEPTACLES)
    return sorted(set(constants.OBJECTS) - static)


def receptacle_types() -> list[str]:
    """Every static receptacle type of ALFRED (the `rtype` constants), sorted."""
    return sorted(set(constants.RECEPTACLES) - set(constants.MOVABLE_RECEPTACLES))
