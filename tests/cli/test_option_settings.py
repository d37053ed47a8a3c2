"""The CLI's option groups are the library's settings: same fields, order and defaults."""

from __future__ import annotations

import dataclasses

import pytest

from rubric.cli import options as opt
from rubric.grading.settings import GradeSettings
from rubric.llm.settings import ApiSettings, ChatSettings, LocalSettings


@pytest.mark.parametrize(
    ("options", "settings"),
    [
        (opt.ApiOptions, ApiSettings),
        (opt.ChatOptions, ChatSettings),
        (opt.LocalOptions, LocalSettings),
        (opt.GradeOptions, GradeSettings),
    ],
)
def test_an_option_group_declares_the_settings_it_subclasses(options, settings):
    """A default changed on one side only would make `rubric` and the Python API disagree."""
    assert issubclass(options, settings)
    ours = dataclasses.fields(options)
    assert [f.name for f in ours] == [f.name for f in dataclasses.fields(settings)]
    for mine, theirs in zip(ours, dataclasses.fields(settings), strict=True):
        if mine.default_factory is not dataclasses.MISSING:
            assert isinstance(mine.default_factory(), type(theirs.default_factory())), mine.name
        else:
            assert mine.default == theirs.default, mine.name
