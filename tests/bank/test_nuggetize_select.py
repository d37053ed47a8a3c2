"""AutoNuggetizer's final selection and context formatting (pure functions)."""

from __future__ import annotations

from rubric.bank.nuggetize import format_context, select, windows


def test_select_sorts_vital_first_stably_and_keeps_the_first_k():
    nuggets = ["a", "b", "c", "d", "e"]
    importance = ["okay", "vital", None, "vital", "okay"]
    assert select(nuggets, importance, 3) == [("b", "vital"), ("d", "vital"), ("a", "okay")]
    assert [n for n, _ in select(nuggets, importance, 10)] == ["b", "d", "a", "e", "c"]


def test_windows_and_context_follow_figure_1():
    assert windows(list("abcdefghijk"), 10) == [list("abcdefghij"), ["k"]]
    assert format_context(["first  passage\nline two", "second"]) == "[1] first passage line two\n[2] second"
