"""Report tables: every format escapes what would break it."""

from __future__ import annotations

import csv
import io

import pytest

from rubric.data.table import Table, check_format
from rubric.errors import UserError


def test_formats_escape_separators():
    t = Table(["a", "b"], [["x\ty", 'he said "1|2"'], [1.5, None]], title="T_1 & more")
    assert t.to_tsv().splitlines()[2] == 'x y\the said "1|2"'
    assert list(csv.reader(io.StringIO(t.to_csv())))[1] == ["x y", 'he said "1|2"']
    assert 'he said "1\\|2"' in t.to_markdown()
    latex = t.to_latex()
    assert "% T\\_1 \\& more" in latex and "1.5000 & " in latex


def test_unknown_format_is_a_user_error():
    with pytest.raises(UserError, match="^fmt: expected one of"):
        check_format("xml")
