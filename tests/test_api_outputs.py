"""The output rule in the library: a Python caller gets what a command gets. An output that is
one of the call's inputs is refused before any work (the input left as it was), and the outputs
of one job are written all or none (rubric.data.files.guarded_outputs, which every command's
wrapper in cli/common.py applies too)."""

from __future__ import annotations

import gzip

import pytest

import rubric
from helpers import BANKS, ROOT
from helpers.graded_fixture import write_graded
from rubric.data.files import guarded_outputs, open_output
from rubric.grading.api import Graded
from rubric.grading.engine import GradeStats

TINY = ROOT / "examples" / "tiny"
SELF = "QuestionSelfRatedUnanswerablePromptWithChoices"


@pytest.fixture
def inputs(tmp_path):
    """Copies of a bank and a topics file (the test may see them survive) and a pool."""
    bank, topics = tmp_path / "bank.jsonl", tmp_path / "topics.json"
    bank.write_bytes((BANKS / "questions.jsonl").read_bytes())
    topics.write_bytes((TINY / "queries.json").read_bytes())
    passages = rubric.pool(topics, [TINY / "runs"], TINY / "collection.tsv", top_k=2)
    return bank, topics, passages


@pytest.mark.parametrize("which", ["bank", "topics", "cache"])
def test_grade_refuses_an_output_that_is_one_of_its_inputs_before_any_work(inputs, tmp_path, which):
    bank, topics, passages = inputs
    cache = tmp_path / "cache.sqlite"
    cache.write_bytes(b"not touched")
    target = {"bank": bank, "topics": topics, "cache": cache}[which]
    before = target.read_bytes()
    kind = {"bank": bank} if which != "topics" else {"topics": topics}
    with pytest.raises(rubric.UserError) as refused:  # no model is loaded: the model does not exist
        rubric.grade(passages, **kind, prompts=SELF, model="no/such-model", cache=cache, output=target)
    assert str(refused.value) == (
        f"output {target}: is also an input of this command ({which} {target}); write to another file"
    )
    assert target.read_bytes() == before and not list(tmp_path.glob("*.partial"))


def test_a_graded_result_writes_anywhere_but_over_what_it_read(inputs, tmp_path):
    bank, _, passages = inputs
    graded = Graded(passages, GradeStats(), None, [("bank", bank)])
    before = bank.read_bytes()
    with pytest.raises(
        rubric.UserError, match=r"^path .*bank.jsonl: is also an input of this command \(bank "
    ):
        graded.write(bank)
    assert bank.read_bytes() == before
    assert graded.write(tmp_path / "graded.jsonl.gz") == 5
    assert len(list(rubric.read_passages(tmp_path / "graded.jsonl.gz"))) == 5


def test_qrels_never_overwrite_the_graded_file_they_come_from(tmp_path):
    graded = write_graded(tmp_path / "graded.jsonl.gz")
    before = gzip.decompress(graded.read_bytes())
    result = rubric.qrels(graded, SELF)
    with pytest.raises(rubric.UserError, match=r"^path .*: is also an input of this command \(graded "):
        result.write(graded)
    assert gzip.decompress(graded.read_bytes()) == before
    assert result.write(tmp_path / "qrels.txt") == sum(len(d) for d in result.to_dict().values())


def test_the_outputs_of_one_job_are_written_all_or_none(tmp_path):
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    with pytest.raises(RuntimeError), guarded_outputs([("a", first), ("b", second)]):
        with open_output(first) as f:
            f.write("complete\n")
        raise RuntimeError("the second output fails")
    assert not first.exists() and not second.exists() and list(tmp_path.iterdir()) == []
    with guarded_outputs([("a", first), ("b", second)]):
        for path in (first, second):
            with open_output(path) as f:
                f.write("complete\n")
    assert first.read_text() == second.read_text() == "complete\n"
    with pytest.raises(rubric.UserError, match=r"^b .*a.txt: is also the output of a$"):
        with guarded_outputs([("a", first), ("b", first)]):
            pass
    with pytest.raises(rubric.UserError, match="is also an input"):
        with guarded_outputs([("out", first)], [("source", tmp_path)]):  # a file inside an input folder
            pass
