"""The original workbench's banks (phase1-data: DL19/DL20/CAR questions and nuggets) load, show,
edit and diff; their item ids follow our id rule qid[/facet]/md5(text.strip())."""

from __future__ import annotations

import pytest

from rubric.bank.ids import item_id
from rubric.data.jsonl import read_bank

BANKS = ["dl19-questions", "dl19-nuggets", "dl20-questions", "dl20-nuggets", "car-questions", "car-nuggets"]
COUNTS = {"dl19-questions": (43, 430), "dl19-nuggets": (43, 464), "dl20-questions": (54, 540)}


@pytest.mark.parametrize("name", BANKS)
def test_original_banks_load_and_ids_are_md5_of_text(shared, name):
    path = shared("rubric-workbench", "rubric-evaluation", "phase1-data", f"{name}.jsonl.gz")
    banks = list(read_bank(path))
    items = [(b, i) for b in banks for i in b.items]
    if name in COUNTS:
        assert (len(banks), len(items)) == COUNTS[name]
    assert all(i.item_id == item_id(b.query_id, i.item_text, b.facet_id) for b, i in items)


def test_show_edit_diff_on_the_dl20_nugget_bank(cli, shared, tmp_path):
    path = shared("rubric-workbench", "rubric-evaluation", "phase1-data", "dl20-nuggets.jsonl.gz")
    shown = cli("bank", "show", path, "--query", "940547")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[0].startswith("# 940547: when did rock n roll begin?")
    assert "940547/79127769531faf8ed9b9c2b8c8209002\tBlend of various genres" in shown.stdout
    out = tmp_path / "edited.jsonl.gz"
    rewrite = "940547/79127769531faf8ed9b9c2b8c8209002=Blend of blues and country"
    r = cli("bank", "edit", path, "--rewrite", rewrite, "--add", "940547=Elvis Presley 1956", "-o", out)
    assert r.returncode == 0, r.stderr
    d = cli("bank", "diff", path, out)
    lines = d.stdout.splitlines()
    assert lines[0] == "# 940547" and len(lines) == 3
    assert lines[1].startswith("+ 940547/") and lines[1].endswith("\tElvis Presley 1956")
    assert lines[2].startswith("~ 940547/79127769531faf8ed9b9c2b8c8209002 -> 940547/")
    assert "0 removed, 1 added, 1 rewritten" in d.stderr
    # everything else is unchanged, unknown fields included
    original = {b.query_id: b.to_json() for b in read_bank(path)}
    edited = {b.query_id: b.to_json() for b in read_bank(out)}
    assert {q: v for q, v in original.items() if q != "940547"} == {
        q: v for q, v in edited.items() if q != "940547"
    }


def test_genq_question_set_imports_as_the_original_loaded_it(cli, shared, tmp_path):
    """naghmeh-questions.json (the original's --question-type genq input) imports without --format;
    every question keeps the original loader's id query/facet/md5(question as written)."""
    import hashlib
    import json
    import re

    source = shared("rubric-workbench", "rubric-grading-workbench", "naghmeh-questions.json")
    out = tmp_path / "genq.jsonl.gz"
    r = cli("bank", "import", source, "-o", out)
    assert r.returncode == 0, r.stderr
    expected = {
        f"{qid}/{fid}/{hashlib.md5(q.encode()).hexdigest()}": re.sub(r"^\d+\.\s+", "", q)
        for qid, facets in json.loads(source.read_text()).items()
        for fid, facet in facets.items()
        for q in facet["questions"]
        if len(re.sub(r"^\d+\.\s+", "", q)) > 1
    }
    banks = list(read_bank(out))
    got = {i.item_id: i.item_text for b in banks for i in b.items}
    assert got == expected
    assert (len(banks), len(got)) == (132, 8878)
