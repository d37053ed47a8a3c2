"""`verify sample`'s draws: uniform and seeded, proportional strata, the passages order."""

from __future__ import annotations

from collections import Counter

import pytest

from rubric.errors import UserError
from rubric.verify.sample import draw, passages_to_check, strata_by_mean_label


def test_uniform_draw_gives_every_topic_the_same_chance():
    topics = [f"t{i:02d}" for i in range(20)]
    counts = Counter(t for seed in range(4000) for t in draw(topics, 5, seed).topics)
    assert all(abs(c / 4000 - 5 / 20) < 0.03 for c in counts.values()), counts
    assert draw(topics, 5, 3).topics == draw(topics, 5, 3).topics


def test_strata_are_proportional():
    labels = {f"t{i:02d}": {"d": i % 4} for i in range(12)}
    strata = strata_by_mean_label(labels, 3)
    assert Counter(strata.values()) == {0: 4, 1: 4, 2: 4}
    s = draw(list(labels), 6, 1, strata)
    assert [d for _, d in s.strata] == [2, 2, 2] and s.exact()
    per_group = Counter(strata[t] for t in s.topics)
    assert per_group == {0: 2, 1: 2, 2: 2}
    uneven = draw(list(labels), 5, 1, strata)
    assert sum(d for _, d in uneven.strata) == 5 and not uneven.exact()
    assert any("rounded" in h for h in uneven.header())


def test_too_many_topics_is_an_error():
    with pytest.raises(UserError, match="^size: "):
        draw(["a", "b"], 3, 0)


def test_passages_order_puts_disagreement_first(tmp_path):
    from helpers import graded_fixture

    path = graded_fixture.write_graded(tmp_path / "g.jsonl.gz")
    table = passages_to_check(path, level=4)
    rows = list(table.rows)
    spreads = [r[2] for r in rows]
    assert spreads == sorted(spreads, reverse=True)
    assert "not at random" in table.notes[0]
