"""`--llm random[:SEED]`: no model, a uniform choice among the admissible actions (the baseline the
other knowledge sources are measured against), seeded, and refused with a bad seed."""
from __future__ import annotations

import pytest

from prag.errors import LLMError
from prag.llm import check_spec, make_llm

CHOICES = [f"go to drawer {n}" for n in range(1, 21)]


def test_random_picks_among_the_choices_the_same_way_for_a_seed() -> None:
    picks = [make_llm("random:3").complete([], choices=CHOICES).text for _ in range(3)]
    assert picks[0] in CHOICES and len(set(picks)) == 1  # a new backend of one seed starts alike
    llm = make_llm("random:3")
    many = {llm.complete([], choices=CHOICES).text for _ in range(60)}
    assert len(many) > 10 and many <= set(CHOICES)
    assert make_llm("random").name == "random:0"


def test_a_seed_that_is_no_number_is_refused_before_anything_runs() -> None:
    with pytest.raises(LLMError, match=r"random takes a seed, a whole number"):
        check_spec("random:many")
