"""prag.text: the leading article of a phrase, as goals and instructions name things."""
from __future__ import annotations

import pytest

from prag.text import without_article


@pytest.mark.parametrize(("phrase", "named"), [
    ("the red box", "red box"),
    ("an unknown substance b", "unknown substance b"),
    ("a thermometer", "thermometer"),
    ("theatre seat", "theatre seat"),  # a word that begins like an article is kept whole
    ("box the apple", "box the apple"),  # only a leading article
    ("the the box", "the box"),  # one article
    ("The box", "The box"),  # goals are read in lower case
])
def test_a_phrase_loses_its_leading_article_alone(phrase, named):
    assert without_article(phrase) == named
