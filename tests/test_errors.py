"""`UserError` names library parameters; the CLI spells them as its options."""

from __future__ import annotations

import pickle

import pytest

from rubric.cli.common import flag
from rubric.errors import UserError, at_least, one_of


def test_a_parameter_is_its_name_in_the_library_and_its_option_in_the_cli():
    e = UserError("{ray_address}: only with {ray}; give another {output}", "ray_address", "ray", "output")
    assert str(e) == "ray_address: only with ray; give another output"
    assert e.spelled(flag) == "--ray-address: only with --ray; give another -o"
    again = pickle.loads(pickle.dumps(e))  # a worker process sends the error itself
    assert isinstance(again, UserError) and again.spelled(flag) == e.spelled(flag)


def test_a_message_without_parameters_is_left_as_written():
    e = UserError("x.toml:3: unknown placeholder {qeury}")
    assert str(e) == e.spelled(flag) == "x.toml:3: unknown placeholder {qeury}"


def test_checks_take_a_parameter_or_a_flag():
    with pytest.raises(UserError) as low:
        at_least("checkpoint_pairs", 0, 1)
    assert (str(low.value), low.value.spelled(flag)) == (
        "checkpoint_pairs: must be at least 1, got 0",
        "--checkpoint-pairs: must be at least 1, got 0",
    )
    with pytest.raises(UserError) as choice:
        one_of("--format", "md", ["tsv"])
    assert str(choice.value) == choice.value.spelled(flag) == "--format: expected one of tsv, got 'md'"
