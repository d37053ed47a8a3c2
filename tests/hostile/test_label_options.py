"""The label options of issue 40: `evaluate qrels --map` and `evaluate learn --apply`, given
nonsense. One error naming the option (or the file), exit 2, no output file, nothing read first."""

from __future__ import annotations

import pytest

from helpers import faults

BAD_MAPS = ["5:3", "a=1", "", "5=", "=3", "5=3,,4=1", "5=3;4=1", "5=x", "2.5=1"]


@pytest.mark.parametrize("spec", BAD_MAPS)
def test_bad_map_is_one_error_before_the_file_is_read(tmp_path, spec):
    """The graded file does not exist: the --map error comes first."""
    r = faults.rubric("evaluate", "qrels", "missing.jsonl.gz", "-o", "out.qrels", "--map", spec, cwd=tmp_path)
    faults.assert_one_error(r, "--map", "GRADE=LEVEL")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("spec", BAD_MAPS[:3])
def test_bad_map_of_verify_agreement_is_the_same_error(tmp_path, spec):
    f = faults.valid_inputs(tmp_path / "in")
    r = faults.rubric(
        "verify",
        "agreement",
        "--labels",
        f["qrels.txt"],
        "--judgments",
        f["qrels.txt"],
        "--map",
        spec,
        cwd=tmp_path,
    )
    faults.assert_one_error(r, "--map", "GRADE=LEVEL")


def test_apply_file_that_is_no_graded_file(tmp_path):
    f = faults.valid_inputs(tmp_path / "in")
    out = tmp_path / "out.qrels"
    r = faults.rubric("evaluate", "learn", f["graded"], "--apply", f["qrels.txt"], "-o", out, cwd=tmp_path)
    faults.assert_one_error(r, "qrels.txt")
    assert not out.exists()


def test_apply_output_may_not_be_the_apply_file(tmp_path):
    f = faults.valid_inputs(tmp_path / "in")
    before = f["graded"].read_bytes()
    r = faults.rubric(
        "evaluate", "learn", f["graded"], "--apply", f["graded"], "-o", f["graded"], cwd=tmp_path
    )
    faults.assert_one_error(r, "--output")
    assert f["graded"].read_bytes() == before
