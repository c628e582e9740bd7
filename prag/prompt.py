"""The planner's prompt, laid out for the backend's prefix cache.

Messages, most stable first:
1. system: the rules of the game (never changes);
2. user: the retrieved experiences (changes only when the top-K set changes);
3. user: the goal and the episode so far, appended step by step, then the part that changes
   every step (scene graph, admissible actions, warnings) last.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from prag.experience import Experience
from prag.llm.base import Message

SYSTEM = (
    "You are a household robot acting in a text world. Each turn you pick exactly one action "
    "from the list of admissible actions; nothing else can be done. Work towards the goal step by "
    "step: find the object, take it, change it if the goal asks (heat, cool, clean, use a lamp), "
    "and put it where the goal says. Receptacles may be closed: open them to see inside. "
    "Do not repeat an action that changed nothing."
)
THINK = "Think in one short sentence about what to do next. Reply with the sentence only."
ACT = "Now reply with the next action only, exactly as written in the admissible actions."


@dataclass(frozen=True)
class PromptLimits:
    example_steps: int = 20  # actions shown per retrieved episode
    observation_chars: int = 200  # observation text kept per step (examples and history)


def clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def experience_block(experiences: Sequence[Experience], limits: PromptLimits) -> str:
    parts = [
        "Past attempts at similar tasks, from your own experience. Follow what worked in the "
        "successful ones; avoid what the failed ones did."
    ]
    for number, experience in enumerate(experiences, start=1):
        episode, hit = experience.episode, experience.hit
        outcome = "SUCCESS (goal reached)" if episode.won else "FAILURE (goal not reached)"
        lines = [f"## Attempt {number}: {outcome}", f"Goal: {episode.goal}"]
        if hit.best_step is not None:
            scene = episode.steps[min(hit.best_step, len(episode.steps) - 1)].scene
            lines.append(f"Scene graph most like yours (step {hit.best_step}): {clip(scene, 300)}")
        lines.append(clip(episode.steps[0].observation, limits.observation_chars))
        acted = [step for step in episode.steps if step.action is not None]
        for step in acted[: limits.example_steps]:
            lines.append(f"> {step.action}\n{clip(step.observation, limits.observation_chars)}")
        if len(acted) > limits.example_steps:
            lines.append(f"... ({len(acted) - limits.example_steps} more steps)")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def episode_text(goal: str, history: Sequence[tuple[str | None, str]], limits: PromptLimits) -> str:
    """The goal and the episode so far: the reset observation, then `> action` and its result."""
    lines = [f"Your goal: {goal}"]
    for action, observation in history:
        if action is not None:
            lines.append(f"> {action}")
        lines.append(clip(observation, limits.observation_chars))
    return "\n".join(lines)


def action_list(admissible: Sequence[str]) -> str:
    """The admissible actions, with actions sharing a verb folded: `go to: a, b, c`.

    This part of the prompt changes every step, so its length is paid for every step.
    """
    groups: dict[str, list[str]] = {}
    for action in admissible:
        verb, _, rest = action.partition(" ")
        if verb == "go" and rest.startswith("to "):
            verb, rest = "go to", rest[3:]
        groups.setdefault(verb if rest else action, []).append(rest)
    return "; ".join(
        verb if rests == [""] else f"{verb} {rests[0]}" if len(rests) == 1 else f"{verb}: {', '.join(rests)}"
        for verb, rests in groups.items()
    )


def step_text(scene: str, admissible: Sequence[str], warnings: Sequence[str]) -> str:
    """What changes every step: the scene graph, the actions, and warnings or notes (one per line)."""
    lines = [f"Scene graph now:\n{scene}", "Admissible actions: " + action_list(admissible)]
    lines += list(warnings)
    return "\n".join(lines)


def messages(
    experiences: Sequence[Experience],
    goal: str,
    history: Sequence[tuple[str | None, str]],
    scene: str,
    admissible: Sequence[str],
    warnings: Sequence[str],
    limits: PromptLimits,
) -> list[Message]:
    out: list[Message] = [{"role": "system", "content": SYSTEM}]
    if experiences:
        out.append({"role": "user", "content": experience_block(experiences, limits)})
        out.append({"role": "assistant", "content": "Understood."})
    out.append(
        {
            "role": "user",
            "content": episode_text(goal, history, limits) + "\n\n" + step_text(scene, admissible, warnings),
        }
    )
    return out
