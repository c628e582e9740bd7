"""textworld's pure conversions of fixed strings, done once instead of again at every step or reset.

Profiled on real ALFWorld games (docs/records/engine_speed.md), most of an episode's CPU time went to work
whose result depends only on a string: textworld's PDDL engine writes each step's feedback by
deriving text from its grammar, and `derive` parses the template (and each rule's condition) with
tatsu every time; and it translates the game's PDDL to SAS four times per game (with and without
the planner's optimisations, when the game loads and again at reset), where the reset's two are
the load's again. Both are kept here, and textworld gets results it cannot tell from new ones:
a deep copy of text symbols (derive sets a context on each), a new list of logic values
(propositions, rules: hashable values textworld never changes), the same translated task (read only).
And the planner library a closed game loaded is given to the next game (`_pooled`): the memory it held.

A game prag plays is never planned on by textworld (SPL's reference is planned on the part of the
game its goal can use, prag.envs.alfworld.shortest), so the translation textworld makes for its
planner (optimised) is not made for it (`for_play`): half of a new game's translating.

A translation also outlives the process: its SAS text, a function of the game's PDDL and the
translator's version, is kept compressed in the user cache (`<cache_dir>/alfworld-sas/`, about
50 kB a game), so a game played before (a second round, a rerun, the other worker) parses its
PDDL (milliseconds) instead of translating it again (about 0.6 s a game on valid_seen).
"""
from __future__ import annotations

import contextlib
import copy
import hashlib
import io
import sys
import threading
import zlib
from collections.abc import Callable, Iterator
from functools import cache, lru_cache
from importlib.metadata import version
from pathlib import Path
from typing import Any

from prag.paths import cache_dir, write_whole

_lock = threading.Lock()
_installed = False
_free: list[Any] = []  # planner libraries of closed games (see _pooled)
_playing = threading.local()  # `on` inside for_play(), in the thread that loads or resets a game


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
        # Two entries: textworld's two calls per game (with and without optimisation: the same
        # translation for a game prag plays, see for_play), from load to reset.
        fast_downward.pddl2sas = lru_cache(maxsize=2)(_kept_translation(fast_downward.pddl2sas))
        fast_downward.load_lib = _pooled(fast_downward.load_lib)
        _installed = True


@contextlib.contextmanager
def for_play() -> Iterator[None]:
    """Games loaded or reset inside are played, never planned on by textworld's `replan`: it gets
    the game's own translation, which it never searches, instead of an optimised one made for it."""
    _playing.on = True
    try:
        yield
    finally:
        _playing.on = False


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


def _kept_translation(pddl2sas: Callable[..., tuple[Any, str]]) -> Callable[..., tuple[Any, str]]:
    """fast_downward's `pddl2sas` with its SAS text kept in the user cache. The parsed task it also
    returns is parsed again (textworld reads its actions, types, objects and initial facts, none
    of which the translation changes)."""
    translator = f"fast-downward-textworld {version('fast-downward-textworld')}"

    def translate(domain: str, problem: str, verbose: bool = False, optimize: bool = False) -> tuple[Any, str]:
        if verbose:  # textworld's TW_PDDL_DEBUG: show the translator's own output
            return pddl2sas(domain, problem, verbose=verbose, optimize=optimize)
        optimize = optimize and not getattr(_playing, "on", False)
        key = hashlib.sha256("\0".join([translator, str(optimize), domain, problem]).encode("utf-8")).hexdigest()
        path = sas_cache() / f"{key}.sas.z"
        try:
            sas = zlib.decompress(path.read_bytes()).decode("utf-8")
        except (OSError, zlib.error, UnicodeDecodeError):  # not translated yet, or a damaged entry
            task, sas = pddl2sas(domain, problem, optimize=optimize)
            write_whole(path, zlib.compress(sas.encode("utf-8"), 6))
            return task, sas
        return _parsed_task(domain, problem), sas

    return translate


def _parsed_task(domain: str, problem: str) -> Any:
    """The task `pddl2sas` returns: the PDDL parsed and normalised, its warnings not printed."""
    argv = sys.argv
    sys.argv = ["translate.py", "domain", "task"]  # the translator reads its options from argv on import
    try:
        from fast_downward.translate import normalize
        from fast_downward.translate.pddl_parser import lisp_parser, parsing_functions
    finally:
        sys.argv = argv
    with contextlib.redirect_stdout(io.StringIO()):  # "Atom ... specified twice": pddl2sas hides them too
        task = parsing_functions.parse_task(lisp_parser.parse_nested_list(domain.split("\n")),
                                            lisp_parser.parse_nested_list(problem.split("\n")))
        normalize.normalize(task)
    return task


def sas_cache() -> Path:
    return cache_dir() / "alfworld-sas"
