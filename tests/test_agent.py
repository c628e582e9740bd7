"""The P-RAG agent's own behaviour, with the scripted stand-in LLM: what it offers (tabu on state
and action, the undo ban of each family's grammar), the notes its hints add, re-asks, constrained
choices, and the trace it reports through the Agent protocol."""
from __future__ import annotations

from prag.agent.agent import PragAgent
from prag.agent.config import AgentConfig
from prag.agent.protocol import Agent
from prag.envs.base import Observation, Triple, scene_text_from_triples
from prag.envs.domain import ALFWORLD, GRID, TEXTWORLD, Domain
from prag.llm.scripted import ScriptedLLM
from prag.retrieval.index import Visibility
from prag.store.episode_extra import AgentReport, Choice, Effort, EpisodeExtra, GoalReading

GOAL = "put some newspaper on ottoman."
# The grid's goals below are no sentences of its schema: its tests leave out the LLM reader, which
# would ask the scripted LLM to read them before the first step.
UNREAD = ("template",)


def seen(text: str, admissible: list[str], at: str | None = None, *triples: Triple, goal: str = GOAL) -> Observation:
    return Observation(goal, text, admissible, list(triples), scene_text_from_triples(at, triples), location=at)


def agent_of(domain: Domain, answers, **config) -> PragAgent:
    return PragAgent(ScriptedLLM(answers), None, Visibility(), AgentConfig(think=False, **config), domain=domain)


def step_lines(agent: PragAgent) -> list[str]:
    """The lines of the latest step's part of the prompt (re-asks follow it)."""
    step = next(m for m in reversed(agent.settings.llm.calls[-1]["messages"]) if "Admissible actions: " in m["content"])
    return step["content"].splitlines()


def offered(agent: PragAgent) -> str:
    """The admissible actions of the latest prompt, as the prompt lists them."""
    return next(line for line in step_lines(agent) if line.startswith("Admissible actions: ")).removeprefix("Admissible actions: ")


def notes(agent: PragAgent) -> list[str]:
    return [line for line in step_lines(agent) if line.startswith(("Note: ", "Warning: "))]


def test_it_is_an_agent_whose_system_prompt_is_its_domains_rules():
    agent = agent_of(TEXTWORLD, ["go north"])
    assert isinstance(agent, Agent)
    agent.reset(seen("You are in the kitchen.", ["go north"], "kitchen"))
    agent.act(seen("You are in the kitchen.", ["go north"], "kitchen"))
    system = agent.settings.llm.calls[-1]["messages"][0]
    assert system == {"role": "system", "content": TEXTWORLD.rules}
    assert "heat" not in TEXTWORLD.rules and "lamp" not in GRID.rules and "use a lamp" in ALFWORLD.rules


def test_an_action_taken_from_the_same_state_is_not_offered_there_again_unless_all_were():
    agent = agent_of(ALFWORLD, lambda messages: "open safe 1")
    here = seen("The safe 1 is closed.", ["go to shelf 1", "open safe 1"], "safe 1", ("safe 1", "is", "closed"))
    agent.reset(here)
    assert agent.act(here).action == "open safe 1"
    agent.observe("open safe 1", here)  # nothing changed
    agent.act(here)
    assert offered(agent) == "go to shelf 1" and agent.llm_step.usage.banned_actions == 1
    agent.observe("go to shelf 1", here)  # as if the walk led back here
    agent.act(here)
    assert offered(agent) == "go to shelf 1; open safe 1"  # all tried once: the least tried stay


def test_alfworld_never_offers_to_put_back_what_was_just_taken_or_close_what_was_just_opened():
    agent = agent_of(ALFWORLD, ["go to ottoman 1"] * 2)
    agent.reset(seen("You see a ottoman 1, and a shelf 1.", []))
    agent.observe("take newspaper 1 from shelf 1", seen("You pick up the newspaper 1 from the shelf 1.", []))
    agent.act(seen("", ["go to ottoman 1", "move newspaper 1 to shelf 1", "put newspaper 1 in/on shelf 1", "take book 1 from shelf 1"]))
    assert offered(agent) == "go to ottoman 1; take book 1 from shelf 1"
    agent.observe("open drawer 1", seen("You open the drawer 1.", []))
    agent.act(seen("", ["close drawer 1", "go to ottoman 1"]))
    assert offered(agent) == "go to ottoman 1"


def test_the_grid_never_offers_to_drop_back_what_was_just_picked_up():
    agent = agent_of(GRID, ["go to table 1"] * 2, readers=UNREAD)
    agent.reset(seen("You are in the kitchen.", [], "shelf 1"))
    agent.observe("pick up apple 1", seen("You pick up apple 1 from shelf 1.", [], "shelf 1", ("agent", "holds", "apple 1")))
    agent.act(seen("", ["drop apple 1 on shelf 1", "go to table 1"], "shelf 1", ("agent", "holds", "apple 1")))
    assert offered(agent) == "go to table 1"
    # Dropped where it belongs: picking it up again would undo that.
    agent.observe("drop apple 1 in fridge 1", seen("You put apple 1 in fridge 1.", [], "fridge 1"))
    agent.act(seen("", ["pick up apple 1", "close fridge 1", "go to table 1"], "fridge 1"))
    assert offered(agent) == "close fridge 1; go to table 1"


def test_textworld_never_offers_to_put_back_what_was_just_taken():
    agent = agent_of(TEXTWORLD, ["go east"] * 2)
    agent.reset(seen("You are in the kitchen.", [], "kitchen"))
    agent.observe("take milk from fridge", seen("You take the milk from the fridge.", [], "kitchen"))
    agent.act(seen("", ["insert milk into fridge", "go east"], "kitchen"))
    assert offered(agent) == "go east"
    agent.observe("open fridge", seen("You open the fridge.", [], "kitchen"))
    agent.act(seen("", ["close fridge", "go east"], "kitchen"))
    assert offered(agent) == "go east"


def test_alfworld_notes_come_in_order_after_the_actions():
    goal = "put some newspaper on ottoman."
    agent = agent_of(ALFWORLD, ["go to cabinet 1"] * 3)
    start = seen("You see a cabinet 1, a ottoman 1, and a shelf 1.", ["go to shelf 1"], "middle of room")
    agent.reset(start)
    agent.hear("the newspaper is on the shelf")
    shelf = seen("On the shelf 1, you see a book 1, and a newspaper 1.", [], "shelf 1", ("newspaper 1", "on", "shelf 1"))
    agent.observe("go to shelf 1", shelf)
    closed = seen("The cabinet 1 is closed.", [], "cabinet 1", ("cabinet 1", "is", "closed"))
    agent.observe("go to cabinet 1", closed)
    agent.observe("go to cabinet 1", closed)  # the same answer again: a loop
    agent.act(seen("", ["go to shelf 1", "go to ottoman 1", "open cabinet 1"], "cabinet 1", ("cabinet 1", "is", "closed"), goal=goal))
    assert notes(agent) == [
        "Warning: you did 'go to cabinet 1' 2 times and nothing changed; do something else.",
        "Note: not visited yet: ottoman 1.",
        "Note: seen so far: newspaper 1 at shelf 1.",
        "Note: closed, not opened yet: cabinet 1.",
        'Note: the person told you: "the newspaper is on the shelf". Do what they say.',
    ]


def test_textworld_moves_by_direction_count_as_visited_from_where_they_were_taken():
    agent = agent_of(TEXTWORLD, lambda messages: "go east")
    agent.reset(seen("You are in the kitchen.", [], "kitchen"))
    agent.observe("go east", seen("You are in the hall.", [], "hall"))
    agent.act(seen("", ["go east", "go west"], "hall"))
    assert "Note: not visited yet" not in "\n".join(notes(agent))  # nothing taken from the hall yet
    agent.observe("go west", seen("You are in the kitchen. You see a milk.", [], "kitchen"))
    agent.act(seen("", ["go east", "go north"], "kitchen", goal="take the milk"))
    assert "Note: not visited yet: north." in notes(agent)


def test_an_invalid_answer_is_asked_again_with_the_error_then_sent_as_it_was():
    agent = agent_of(GRID, ["Action: go to: table 1", "fly", "fly", "fly"], max_reasks=2, readers=UNREAD)
    here = seen("You are in the kitchen.", ["go to table 1", "go to shelf 1"], "kitchen")
    agent.reset(here)
    assert agent.act(here).action == "go to table 1" and agent.llm_step.usage.reasks == 0  # the folded form is the action
    decision = agent.act(here)
    assert (decision.action, decision.valid) == ("fly", False)
    assert agent.llm_step.usage.reasks == 2 and agent.llm_step.usage.invalid_actions == 1
    assert "'fly' is not an admissible action" in agent.settings.llm.calls[-1]["messages"][-1]["content"]


def test_a_backend_that_constrains_is_given_the_allowed_actions_as_choices():
    llm = ScriptedLLM(["go to table 1", "go to shelf 1"], supports_choices=True)
    agent = PragAgent(llm, None, Visibility(), AgentConfig(think=False, readers=UNREAD), domain=GRID)
    here = seen("You are in the kitchen.", ["go to table 1", "go to shelf 1"], "kitchen")
    agent.reset(here)
    agent.act(here)
    assert llm.calls[-1]["choices"] == ["go to table 1", "go to shelf 1"]
    agent.observe("go to table 1", here)
    agent.act(here)
    assert llm.calls[-1]["choices"] == ["go to shelf 1"]  # the tabu holds for choices too


def test_finish_reports_what_the_store_keeps():
    agent = PragAgent(ScriptedLLM(["I go to the table.", "go to table 1"]), None, Visibility(), AgentConfig(think=True, readers=UNREAD), domain=GRID)
    here = seen("You are in the kitchen.", ["go to table 1"], "kitchen")
    agent.reset(here)
    agent.hear("try  the table")
    decision = agent.act(here)
    assert (decision.action, decision.thought) == ("go to table 1", "I go to the table.")
    agent.observe(decision.action, here)
    trace = agent.finish()
    assert trace.goal == GOAL and trace.usage.cost.calls == 2 and trace.retrieved == []
    assert trace.report == AgentReport(
        thoughts=["I go to the table."],
        utterances=[(0, "try the table")],
        decisions=[Choice("llm", True, False)],  # who chose each step, whether it asked
        effort=Effort(instructions=1, words=3),  # what the person said cost them
        # no sentence of the grid's schema, and no LLM reader: nothing read it
        reading=GoalReading(GOAL, fits=True),
        subgoals=[],  # no route read: no sub-goals to follow
        steps_past_llm_budget=0,  # no budget: every step the LLM chose, it was asked
    )
    # As the store writes it: the keys older prag wrote, a decision now named.
    stored = EpisodeExtra(**vars(trace.report)).to_json()
    assert stored["decisions"] == [{"source": "llm", "asked": True, "same_plan": False}]
    assert stored["utterances"] == [(0, "try the table")] and stored["effort"] == {"instructions": 1, "words": 3, "answers": 0}
    assert set(stored) == {"thoughts", "invalid_actions", "banned_actions", "corrections", "utterances", "decisions",
                           "effort", "reading", "subgoals", "steps_past_llm_budget", "retrieved"}


def test_grid_goal_objects_of_two_word_kinds_are_pointed_out():
    goal = "Throw away the trash: put soda can and banana peel in the bin."
    agent = agent_of(GRID, ["go to bin 1"], readers=UNREAD)
    agent.reset(seen("You are in the kitchen.", [], "kitchen", goal=goal))
    shelf = ("soda can 1", "onTop", "shelf 1"), ("book 1", "onTop", "shelf 1")
    agent.observe("go to shelf 1", seen("You arrive at shelf 1. On shelf 1, you see soda can 1, book 1.", [], "shelf 1", *shelf, goal=goal))
    agent.act(seen("", ["go to bin 1"], "shelf 1", *shelf, goal=goal))
    assert "Note: seen so far: soda can 1 at shelf 1." in notes(agent)


def test_grid_things_are_noted_where_they_are_not_where_the_agent_stood():
    """A grid room's description lists what is on every piece of furniture in it: at the fridge,
    the milk on the counter is on the counter (the note had said "milk 1 at fridge 1")."""
    goal = "Put away the groceries: put the milk in the fridge."
    agent = agent_of(GRID, ["go to counter 1"], readers=UNREAD)
    agent.reset(seen("You are in the kitchen.", [], "kitchen", goal=goal))
    at_fridge = seen("You arrive at fridge 1. On counter 1, you see milk 1.", ["go to counter 1"], "fridge 1",
                     ("milk 1", "onTop", "counter 1"), ("fridge 1", "is", "closed"), goal=goal)
    agent.observe("go to fridge 1", at_fridge)
    agent.act(at_fridge)
    assert "Note: seen so far: milk 1 at counter 1." in notes(agent)
