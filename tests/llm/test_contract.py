"""The backend contract is declared by types: every registered backend inherits the classes of
rubric.llm.base it implements, and no code probes a backend with hasattr / getattr."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from rubric.llm.base import Backend, ChoiceRater, PairGrader, ScaleGrader, TextGenerator, TokenCounter
from rubric.llm.registry import BACKENDS, backend_class

SRC = Path(__file__).resolve().parents[2] / "src" / "rubric"

DECLARED = {
    "hf-seq2seq": {ChoiceRater, TokenCounter},
    "hf-causal": {ChoiceRater, TokenCounter},
    "hf-qa": {PairGrader},
    "openai": {ChoiceRater, TokenCounter},
    "embedding": {ScaleGrader},
    "ct2-seq2seq": {ChoiceRater, TokenCounter},
    "ct2-causal": {ChoiceRater, TokenCounter},
}


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_registered_backends_declare_their_capabilities(name):
    cls = backend_class(name)
    assert issubclass(cls, Backend) and cls.name == name
    assert name in DECLARED, f"add the new backend {name} to DECLARED"
    for capability in (TextGenerator, ChoiceRater, PairGrader, ScaleGrader, TokenCounter):
        wanted = any(issubclass(c, capability) for c in DECLARED[name])
        assert issubclass(cls, capability) == wanted, (name, capability.__name__)
    assert not cls.__abstractmethods__  # every declared call is implemented


def test_no_code_probes_a_backend():
    probes = []
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                if node.func.id in ("hasattr", "getattr") and node.args:
                    target = ast.unparse(node.args[0])
                    if "backend" in target or "llm" in target:
                        probes.append(f"{path.relative_to(SRC)}:{node.lineno}: {ast.unparse(node)}")
    assert probes == []
