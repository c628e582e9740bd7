"""textworld's pure conversions of fixed strings, done once instead of again at every step or reset.

Profiled on real ALFWorld games (docs/engine_speed.md), most of an episode's CPU time went to work
whose result depends only on a string: textworld's PDDL engine writes each step's feedback by
deriving text from its grammar, and `derive` parses the template (and each rule's condition) with
tatsu every time; and it translates the game's PDDL to SAS four times per game (with and without
the planner's optimisations, when the game loads and again at reset), where the reset's two are
the load's again. Both are kept here, and textworld gets results it cannot tell from new ones:
a deep copy of text symbols (derive sets a context on each), a new list of logic values
(propositions, rules: hashable values textworld never changes), the same translated task (read only).
And the planner library a closed game loaded is given to the next game (`_pooled`): the memory it held.
"""
from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from functools import cache, lru_cache
from typing import Any

_lock = threading.Lock()
_installed = False
_free: list[Any] = []  # planner libraries of closed games (see _pooled)


def memoize_engine() -> None:
    """Keep textworld's string parses and PDDL translations in this process, and reuse the planner
    libraries of closed games (idempotent)."""
    global _installed
    with _lock:
        if _installed:
            return
        import fast_downward
        import textworld.logic as logic
        from textworld.envs.pddl import textgen

        textgen._parse_and_convert = _kept_parse(textgen._parse_and_convert, copy.deepcopy)
        logic._parse_and_convert = _kept_parse(logic._parse_and_convert, _new_list)
        # Two entries: a game's translations with and without optimisation, from load to reset.
        fast_downward.pddl2sas = lru_cache(maxsize=2)(fast_downward.pddl2sas)
        fast_downward.load_lib = _pooled(fast_downward.load_lib)
        _installed = True


def give_back(library: Any) -> None:
    """A closed game's planner library, emptied, for the next game this process starts."""
    library.cleanup()  # the SAS tasks it held
    with _lock:
        _free.append(library)


def _pooled(load_lib: Callable[[], Any]) -> Callable[[], Any]:
    """textworld loads a private copy of Fast Downward's library (a 33 MB file) for every game it
    starts, so that games in parallel threads keep their own state, and never unloads it: about 5 MB
    of resident memory stayed per game played, over a gigabyte for two rounds of valid_seen in one
    process (unloading it crashes the interpreter at exit). A closed game's copy is used again
    instead: as many copies as games open at once."""

    def load() -> Any:
        with _lock:
            if _free:
                return _free.pop()
        return load_lib()

    return load


def _new_list(parsed: Any) -> Any:
    return list(parsed) if isinstance(parsed, list) else parsed


def _kept_parse(parse: Callable[..., Any], fresh: Callable[[Any], Any]) -> Callable[..., Any]:
    @cache
    def parsed(text: str, rule_name: str) -> Any:
        return parse(text, rule_name=rule_name)

    def kept(text: str, rule_name: str, **options: Any) -> Any:
        if any(options.values()):  # e.g. textworld's TW_CSG_TRACE debugging: parse as it would
            return parse(text, rule_name=rule_name, **options)
        return fresh(parsed(text, rule_name))

    return kept
