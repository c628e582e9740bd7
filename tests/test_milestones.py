"""Sub-goals learned from reward (prag.agent.goals.milestones): what a step that raised the score made
true, lifted to the roles the task's words give its things, re-bound in another task, merged in
the order episodes reached them; worked out by hand on stored episodes of the tidy family's shape."""
from __future__ import annotations

from prag.agent.goals.milestones import (Binder, Term, as_goal, evidence_of, facts_of, goal_phrases, lesson, merged, say, term,
                                        whole, won_reading)
from prag.envs.base import scene_text_from_triples
from prag.envs.facts import AT, HOLDS, PLACED, state_predicate
from prag.envs.sciworld.domain import SCIWORLD
from prag.store.records import EpisodeRecord, StepRecord
from tests.families.tidy import DOMAIN as TIDY

GOAL = "Put the things where they belong."


def played(goal: str, steps: list[tuple[str | None, str | None, list[tuple[str, str, str]], float]],
           episode_id: int = 1, won: bool = False) -> EpisodeRecord:
    """An episode of (action, location, triples, score) steps; the first has no action."""
    records = [StepRecord(t, action, f"obs {t}", scene_text_from_triples(at, triples), at, sorted(triples), score)
               for t, (action, at, triples, score) in enumerate(steps)]
    return EpisodeRecord("r1", 0, "t", "tidy", goal, won, records, id=episode_id)


TIDIED = played(GOAL, [
    (None, None, [], 0.0),
    ("go to table 1", "table 1", [("cup 1", "on", "table 1")], 0.0),
    ("take cup 1 from table 1", "table 1", [("agent", "holds", "cup 1")], 0.0),
    ("go to box 1", "box 1", [("agent", "holds", "cup 1"), ("box 1", "is", "closed")], 0.0),
    ("open box 1", "box 1", [("agent", "holds", "cup 1"), ("box 1", "is", "open")], 0.0),
    ("close box 1", "box 1", [("agent", "holds", "cup 1"), ("box 1", "is", "closed")], 0.0),
    ("go to shelf 1", "shelf 1", [("agent", "holds", "cup 1")], 0.0),
    ("put cup 1 on shelf 1", "shelf 1", [("cup 1", "on", "shelf 1")], 50.0),
    ("take cup 1 from shelf 1", "shelf 1", [("agent", "holds", "cup 1")], 0.0),
])


def test_a_rewarded_step_makes_its_facts_a_sub_goal_and_a_lowered_score_an_action_to_avoid() -> None:
    learned = lesson(TIDIED, TIDY)
    assert [m.describe() for m in learned.milestones] == ["cup 1 in shelf 1"]
    milestone = learned.milestones[0]
    cup, shelf = Term("cup 1", "cup"), Term("shelf 1", "shelf")
    assert milestone.core == ((PLACED, (cup, shelf)),) and milestone.gain == 50.0
    # The route keeps what changed something and was not undone: the moves are the map's, and the
    # box opened and closed again with nothing done in between is left out.
    assert [(room, template) for room, (template, _) in milestone.route] == [
        ("table 1", "take {0} from {1}"), ("shelf 1", "put {0} on {1}")]
    # Taking the cup off the shelf lowered the score: that action is one to avoid.
    assert learned.avoid == (("take {0} from {1}", (cup, shelf)),)
    assert learned.ways and all(start != end for start, _, end in learned.ways)


def test_a_move_makes_true_only_where_the_agent_is_and_what_it_carries() -> None:
    episode = played("x", [
        (None, "hallway", [("door", "leadsTo", "kitchen"), ("lamp", "in", "hallway")], 0.0),
        ("go to kitchen", "kitchen", [("pot", "in", "kitchen"), ("stove", "in", "kitchen"), ("stove", "is", "off")], 3.0),
    ])
    (milestone,) = lesson(episode, SCIWORLD).milestones
    assert milestone.core == ((AT, (Term("kitchen", "kitchen"),)),)
    assert say(milestone.core[0]) == "you are in kitchen"


def test_the_goal_s_words_name_a_thing_across_its_changes_of_state_and_of_its_container_s_name() -> None:
    goal = "Your task is to melt ice cream. First, focus on the substance."
    episode = played(goal, [
        (None, "kitchen", [("ice cream", "in", "metal pot"), ("metal pot", "in", "stove"), ("stove", "is", "on"),
                           ("ice cream", "is", "solid")], 10.0),
        ("wait1", "kitchen", [("ice cream", "in", "metal pot containing liquid ice cream"),
                              ("ice cream", "isa", "liquid ice cream"), ("ice cream", "is", "liquid"),
                              ("metal pot containing liquid ice cream", "in", "stove"), ("stove", "is", "on")], 80.0),
    ])
    facts, names = facts_of(episode.steps[1], SCIWORLD)
    assert names["metal pot containing liquid ice cream"] == "metal pot" and names["ice cream"] == "ice cream"
    (milestone,) = lesson(episode, SCIWORLD).milestones
    (predicate, (thing,)), = milestone.core
    assert predicate == state_predicate("liquid") and thing.phrase == "ice cream"
    # What held with it: the ice cream in the pot (the reward asked for the setup too).
    assert [say(f) for f in milestone.context] == ["ice cream in metal pot"]
    # In another variation, "melt ice cream" re-worded "melt rubber" binds the goal's thing anew.
    binder = Binder(SCIWORLD, {"ice cream": "rubber"})
    binder.see({"rubber": "rubber", "metal pot": "metal pot", "ice cream": "ice cream"})
    assert binder.candidates(thing) == ["rubber"]
    assert binder.holds(milestone.core, frozenset({(state_predicate("liquid"), "rubber")})) == {thing: "rubber"}
    assert binder.holds(milestone.core, frozenset({(state_predicate("liquid"), "ice cream")})) is None


def test_a_thing_the_goal_does_not_name_binds_by_its_role_where_nothing_of_its_name_or_kind_holds_it() -> None:
    # The stored marshmallow was frozen in a metal pot; here the mercury is in a cup, and the
    # kitchen's metal pot holds nothing: the pot's steps are the cup's.
    marshmallow, pot, freezer = Term("marshmallow", "marshmallow", "marshmallow"), Term("metal pot", "pot"), Term("freezer", "freezer")
    context = ((PLACED, (marshmallow, pot)),)
    binder = Binder(SCIWORLD, {"marshmallow": "mercury"})
    binder.see({"mercury": "mercury", "cup": "cup", "metal pot": "metal pot", "freezer": "freezer"})
    here = frozenset({(PLACED, "mercury", "cup"), (PLACED, "cup", "workshop"), (PLACED, "metal pot", "kitchen")})
    assert binder.holds(context, here) is None  # by name and kind, nothing holds the mercury
    bound = binder.holds(context, here, by_role=True)
    assert bound == {marshmallow: "mercury", pot: "cup"}
    assert binder.command(("move {0} to {1}", (pot, freezer)), bound, ["move cup to freezer", "move metal pot to freezer"]) \
        == "move cup to freezer"
    # Where the pot does hold it, the binding by name stands; and the goal's own thing is never a role.
    assert binder.holds(context, here | {(PLACED, "mercury", "metal pot")}, by_role=True) == {marshmallow: "mercury", pot: "metal pot"}
    assert binder.holds(context, frozenset({(PLACED, "lead", "cup")}), by_role=True) is None


def test_a_thing_the_goal_names_is_bound_by_its_name_and_by_its_name_with_a_state_before_it() -> None:
    # The gallium was seen solid ("gallium"); melted, the scene calls it "liquid gallium": both are it,
    # and a fact about the liquid one holds of the goal's gallium.
    juice, pot = Term("apple juice", "juice", "apple juice"), Term("metal pot", "pot")
    binder = Binder(SCIWORLD, {"apple juice": "gallium"})
    binder.see({"gallium": "gallium", "liquid gallium": "liquid gallium", "metal pot": "metal pot", "gallium oxide": "gallium oxide"})
    assert binder.candidates(juice) == ["gallium", "liquid gallium"]
    assert binder.holds(((PLACED, (juice, pot)),), frozenset({(PLACED, "liquid gallium", "metal pot")})) == {
        juice: "liquid gallium", pot: "metal pot"}


def test_a_thing_named_by_a_goal_word_with_an_ending_is_that_word_s_thing_in_another_goal() -> None:
    # The person made "soapy water" from soap: the soap is the goal's "soapy", so where the goal
    # says "sugar water" it is the sugar; a pot is no goal's "potato" (an ending of two letters at most).
    phrases = goal_phrases("create the substance 'soapy water' and put it in the potato crate")
    soap, pot = term("soap", phrases, SCIWORLD), term("pot", phrases, SCIWORLD)
    assert soap.phrase == "soapy" and pot.phrase is None
    binder = Binder(SCIWORLD, {"soapy": "sugar"})
    binder.see({"sugar": "sugar", "soap": "soap", "ceramic cup": "ceramic cup"})
    assert binder.candidates(soap) == ["sugar"]
    same = Binder(SCIWORLD, {})  # in the person's own variation, the soap again
    same.see({"sugar": "sugar", "soap": "soap"})
    assert same.candidates(soap) == ["soap"]


def test_the_person_s_own_words_re_worded_name_a_thing_here_and_are_bound_first() -> None:
    # The person's "banana seed" (its own name) is this goal's "pear seed", which the actions call
    # "seed plant"; their "seedling banana tree" is the "seedling pear tree" here, whichever own
    # name it has now (the seed sprouted: its own name is still "pear seed"), before any pear tree.
    seed, tree = Term("banana seed", "seed"), Term("banana tree", "tree", said="seedling banana tree")
    binder = Binder(SCIWORLD, {"banana": "pear"})
    binder.see({"seed plant": "pear seed", "dead pear tree": "pear tree", "adult pear tree": "pear tree",
                "seedling pear tree": "pear seed"})
    assert binder.candidates(seed) == ["pear seed"] and binder.candidates(tree) == ["pear seed", "pear tree"]
    focus = ("focus on {0}", (tree,))
    admissible = ["focus on dead pear tree", "focus on adult pear tree", "focus on seedling pear tree"]
    binder.keep({seed: "pear seed"})  # kept for another term: still the one the step's words say
    assert binder.binding(focus, {}, admissible) == ("focus on seedling pear tree", {tree: "pear seed"})
    assert binder.named_in(focus, "focus on seedling pear tree", {tree: "pear seed"})
    assert not binder.named_in(focus, "focus on dead pear tree", {tree: "pear tree"})  # a tree only by kind
    assert binder.named_in(("focus on {0}", (seed,)), "focus on seed plant", {seed: "pear seed"})
    # Called as the person's was where the goal's words do not say so: not named (their crocodile
    # was the longest-lived of their animals, not of these).
    crocodile = Term("crocodile", "crocodile")
    binder.see({"crocodile": "crocodile"})
    assert not binder.named_in(("focus on {0}", (crocodile,)), "focus on crocodile", {crocodile: "crocodile"})


def test_what_a_person_s_steps_acted_on_is_kept_with_the_states_of_what_it_is_part_of() -> None:
    state = frozenset({(state_predicate("on"), "green light bulb"), (state_predicate("off"), "red light bulb"),
                       (state_predicate("open"), "door"), (PLACED, "green light bulb", "table")})
    known = {"green light bulb", "red light bulb", "table", "door"}
    assert whole("anode in green light bulb", known) == "green light bulb"
    assert whole("terminal 1 in black wire", known) == "terminal 1 in black wire"
    anode, door = Term("anode in green light bulb", "anode"), Term("door", "door")
    assert dict(evidence_of([anode, door], state)) == {anode: frozenset({state_predicate("on")}), door: frozenset()}


def test_a_term_not_named_by_the_goal_binds_the_same_name_first_then_a_thing_of_its_kind() -> None:
    binder = Binder(TIDY, {})
    binder.see({"cup 2": "cup 2", "shelf 1": "shelf 1", "table 1": "table 1"})
    assert binder.candidates(Term("cup 1", "cup")) == ["cup 2"]
    assert binder.candidates(Term("shelf 1", "shelf")) == ["shelf 1"]
    command = binder.command(("take {0} from {1}", (Term("cup 1", "cup"), Term("table 1", "table"))), {},
                             ["take cup 2 from table 1", "look"])
    assert command == "take cup 2 from table 1"
    assert binder.command(("take {0} from {1}", (Term("cup 1", "cup"), Term("box 1", "box"))), {}, ["look"]) is None


def test_several_episodes_sub_goals_merge_in_the_order_reached_the_best_scoring_first() -> None:
    cup, shelf, sock, basket = Term("cup 1", "cup"), Term("shelf 1", "shelf"), Term("sock 1", "sock"), Term("basket 1", "basket")
    first = played(GOAL, [(None, "shelf 1", [("agent", "holds", "cup 1")], 0.0),
                          ("put cup 1 on shelf 1", "shelf 1", [("cup 1", "on", "shelf 1")], 50.0)], episode_id=1)
    second = played(GOAL, [(None, "basket 1", [("agent", "holds", "sock 1")], 0.0),
                           ("put sock 1 in basket 1", "basket 1", [("sock 1", "in", "basket 1")], 34.0),
                           ("go to shelf 1", "shelf 1", [("agent", "holds", "cup 1")], 34.0),
                           ("put cup 1 on shelf 1", "shelf 1", [("cup 1", "on", "shelf 1")], 67.0)], episode_id=2)
    order = merged([lesson(first, TIDY), lesson(second, TIDY)])
    assert [m.core for m in order] == [((PLACED, (sock, basket)),), ((PLACED, (cup, shelf)),)]
    # A correction (rank 0) is read first whatever its score: the sub-goal both reached is its.
    order = merged([lesson(second, TIDY), lesson(first, TIDY, rank=0)])
    assert [(m.core, m.origin) for m in order] == [(((PLACED, (sock, basket)),), 2), (((PLACED, (cup, shelf)),), 1)]


def test_a_sub_goal_one_episode_reached_again_and_again_is_kept_each_time_and_another_s_once() -> None:
    # The plant grows a stage at each wait after watering: the wait is a sub-goal at each rise.
    grown = played(GOAL, [(None, "shelf 1", [], 0.0), ("wait", "shelf 1", [], 20.0), ("wait", "shelf 1", [], 40.0),
                          ("wait", "shelf 1", [], 60.0)], episode_id=1)
    again = played(GOAL, [(None, "shelf 1", [], 0.0), ("wait", "shelf 1", [], 20.0)], episode_id=2)
    order = merged([lesson(grown, TIDY), lesson(again, TIDY)])
    assert [(m.action, m.origin) for m in order] == [(("wait", ()), 1)] * 3


def test_a_sub_goal_is_a_goal_the_learned_model_plans_to() -> None:
    cup, shelf = Term("cup 1", "cup"), Term("shelf 1", "shelf")
    goal = as_goal(((PLACED, (cup, shelf)), (HOLDS, (cup,))))
    assert goal.things == (("v0", "cup"), ("v1", "shelf"))
    assert goal.facts == ((PLACED, "v0", "v1"), (HOLDS, "v0"))


def test_a_family_that_only_wins_makes_its_winning_step_the_sub_goal() -> None:
    won = played("put a cup on shelf", [(None, "shelf 1", [("agent", "holds", "cup 1")], None),  # type: ignore[list-item]
                                        ("put cup 1 on shelf 1", "shelf 1", [("cup 1", "on", "shelf 1")], None)], won=True)
    (milestone,) = lesson(won, TIDY).milestones
    assert [t.phrase for t in milestone.core[0][1]] == ["cup", "shelf"]  # "cup 1" is the goal's cup, by its kind
    assert milestone.describe() == "cup in shelf" and milestone.gain == 1.0


def test_a_win_says_what_its_goal_meant_as_facts_in_the_goal_s_words() -> None:
    steps = played("put a clean apple in fridge", [
        (None, "countertop 1", [("apple 1", "on", "countertop 1")], None),  # type: ignore[list-item]
        ("take apple 1 from countertop 1", "countertop 1", [("agent", "holds", "apple 1")], None),
        ("clean apple 1 with sinkbasin 1", "sinkbasin 1", [("agent", "holds", "apple 1"), ("apple 1", "is", "clean")], None),
        ("open fridge 1", "fridge 1", [("agent", "holds", "apple 1"), ("apple 1", "is", "clean"),
                                       ("fridge 1", "is", "open")], None),
        ("move apple 1 to fridge 1", "fridge 1", [("apple 1", "in", "fridge 1"), ("apple 1", "is", "clean"),
                                                  ("fridge 1", "is", "open")], None),
    ], won=True).steps
    # The fridge left open is no part of it: only the states of what was put or held count.
    assert won_reading("put a clean apple in fridge", steps, TIDY) == "apple is clean; apple in fridge"
    looked = played("look at the bowl under the desklamp", [
        (None, "desk 1", [("bowl 1", "on", "desk 1")], None),  # type: ignore[list-item]
        ("take bowl 1 from desk 1", "desk 1", [("agent", "holds", "bowl 1")], None),
        ("use desklamp 1", "desk 1", [("agent", "holds", "bowl 1"), ("desklamp 1", "is", "on")], None),
    ], won=True).steps
    assert won_reading("look at the bowl under the desklamp", looked, TIDY) == "you hold bowl; desklamp is on"


def test_a_task_failed_outright_is_no_action_to_avoid_elsewhere_a_lowered_score_is() -> None:
    failed = played("Your task is to find a box.", [
        (None, "kitchen", [("red box", "in", "kitchen")], 10.0),
        ("pick up red box", "kitchen", [("red box", "in", "inventory")], 5.0),
        ("focus on red box", "kitchen", [("red box", "in", "inventory"), ("red box", "is", "focused")], -100.0),
    ])
    assert [template for template, _ in lesson(failed, SCIWORLD).avoid] == ["pick up {0}"]


def test_a_thing_the_goal_names_binds_to_the_name_its_last_words_are_where_none_is_called_so() -> None:
    """The goal says "electric buzzer", the scene and the actions "buzzer"; "red light bulb" is
    no "green light bulb", whatever words they share."""
    binder = Binder(SCIWORLD, {"green light bulb": "electric buzzer"})
    binder.see({"buzzer": "buzzer", "red light bulb": "red light bulb", "blue wire": "blue wire"})
    bulb = Term("green light bulb", "bulb", "green light bulb")
    assert binder.candidates(bulb) == ["buzzer"]
    assert Binder(SCIWORLD, {}).candidates(bulb) == []
    wire = Term("blue wire", "wire")
    command = binder.command(("connect {0} terminal 2 to cathode in {1}", (wire, bulb)), {},
                             ["connect blue wire terminal 2 to cathode in buzzer", "look around"])
    assert command == "connect blue wire terminal 2 to cathode in buzzer"


def test_a_circuit_s_wires_bind_to_two_wires_here_and_its_motor_to_what_stands_in_for_it() -> None:
    """The stored circuit joined a black and an orange wire to an electric motor; here the wires
    are red and blue and there is a buzzer. Each wire is bound once and kept, the second to the
    other wire; the motor, which nothing here is called or is a kind of, only where a stand-in is
    asked for, and never to what another term of the step may be."""
    binder = Binder(SCIWORLD, {})
    binder.see({"battery": "battery", "red wire": "red wire", "blue wire": "blue wire", "buzzer": "buzzer"})
    battery, black, orange, motor = (Term("battery", "battery"), Term("black wire", "wire"), Term("orange wire", "wire"),
                                     Term("electric motor", "motor"))
    wiring = ["connect anode in battery to terminal 1 in blue wire", "connect anode in battery to terminal 1 in red wire",
              "connect cathode in battery to terminal 1 in blue wire", "connect cathode in battery to terminal 1 in red wire",
              "connect terminal 2 in red wire to cathode in buzzer", "connect terminal 2 in red wire to cathode in battery",
              "connect terminal 2 in blue wire to cathode in buzzer"]
    found = binder.binding(("connect anode in {0} to terminal 1 in {1}", (battery, black)), {}, wiring)
    assert found is not None
    first = found[1][black]
    binder.keep(found[1])
    second = binder.command(("connect cathode in {0} to terminal 1 in {1}", (battery, orange)), {}, wiring)
    assert second is not None and not second.endswith(first)  # the other wire
    to_motor = ("connect terminal 2 in {0} to cathode in {1}", (black, motor))
    assert binder.command(to_motor, {}, wiring) is None
    stood = binder.binding(to_motor, {}, wiring, stand_in=True)
    assert stood is not None and stood[0] == f"connect terminal 2 in {first} to cathode in buzzer"  # not the battery
    # A thing the goal names is sought, never stood in for.
    named = Term("electric motor", "motor", "electric motor")
    assert binder.binding(("connect terminal 2 in {0} to cathode in {1}", (black, named)), {}, wiring, stand_in=True) is None


def test_a_person_s_step_the_scene_shows_no_change_of_is_on_the_route_and_the_agent_s_is_not() -> None:
    """Connecting the battery shows nothing in a scene graph without wires: in a correction it is
    a step of the route to the rewarded connection; in the agent's own episode, a refused action."""
    at = [("battery", "in", "workshop"), ("blue wire", "in", "workshop"), ("bulb", "in", "workshop")]
    steps = [(None, "workshop", at, 0.0), ("connect anode in battery to blue wire terminal 1", "workshop", at, 0.0),
             ("connect blue wire terminal 2 to cathode in bulb", "workshop", at, 20.0)]
    own = played("Turn on the bulb.", steps)
    corrected = played("Turn on the bulb.", steps)
    corrected = EpisodeRecord(**{**corrected.__dict__, "source": "correction"})
    (mine,), (person,) = lesson(own, SCIWORLD).milestones, lesson(corrected, SCIWORLD).milestones
    assert mine.route == () and mine.action is not None
    assert [template for _, (template, _) in person.route] == ["connect anode in {0} to {1} terminal 1",
                                                               "connect {0} terminal 2 to cathode in {1}"]


def test_a_thing_at_a_stage_binds_to_the_same_stage_of_another_variation_s_thing() -> None:
    """Every stage of the beaver is the beaver; the stored focus on the "baby baby wolf" is taken
    on the "baby baby beaver", not on whichever stage the actions list first."""
    binder = Binder(SCIWORLD, {"wolf": "beaver"})
    binder.see({"adult beaver": "beaver", "baby baby beaver": "beaver", "juvenile beaver": "beaver"})
    wolf = Term("wolf", "wolf", "wolf", said="baby baby wolf")
    actions = ["focus on adult beaver", "focus on baby baby beaver", "focus on juvenile beaver"]
    assert binder.command(("focus on {0}", (wolf,)), {}, actions) == "focus on baby baby beaver"
    assert wolf == Term("wolf", "wolf", "wolf")  # the same term, whatever it was said as


def test_an_exact_binding_takes_no_guess_among_the_names_of_a_thing() -> None:
    """No dove here is a baby: the stored focus on the "baby baby wolf" binds to one of them as a
    guess, never exactly."""
    binder = Binder(SCIWORLD, {"wolf": "dove"})
    binder.see({"dove egg": "dove", "hatchling dove": "dove", "dove": "dove"})
    wolf = Term("wolf", "wolf", "wolf", said="baby baby wolf")
    actions = ["focus on dove", "focus on dove egg", "focus on hatchling dove"]
    assert binder.command(("focus on {0}", (wolf,)), {}, actions) in actions
    assert binder.command(("focus on {0}", (wolf,)), {}, actions, exact=True) is None
    assert binder.command(("focus on {0}", (wolf,)), {}, ["focus on dove"], exact=True) is None
    assert binder.command(("focus on {0}", (Term("wolf", "wolf", "wolf"),)), {}, actions, exact=True) in actions
