"""Session-wide tiny random models for the backend tests (built offline in a temp folder)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("tiny_models", Path(__file__).with_name("tiny_models.py"))
tiny_models = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tiny_models)


@pytest.fixture(scope="session")
def t5_dir(tmp_path_factory) -> Path:
    return tiny_models.build_t5(tmp_path_factory.mktemp("t5"))


@pytest.fixture(scope="session")
def gpt2_dir(tmp_path_factory) -> Path:
    return tiny_models.build_gpt2(tmp_path_factory.mktemp("gpt2"))


@pytest.fixture(scope="session")
def gpt2_chat_dir(tmp_path_factory) -> Path:
    return tiny_models.build_gpt2(tmp_path_factory.mktemp("gpt2chat"), chat=True)


@pytest.fixture(scope="session")
def qa_dir(tmp_path_factory) -> Path:
    return tiny_models.build_bert_qa(tmp_path_factory.mktemp("qa"))


@pytest.fixture(scope="session")
def hf_tiny():
    """The builder module (tests/llm/tiny_models.py), for tests that need a model of their own."""
    return tiny_models


@pytest.fixture(scope="session")
def words() -> list[str]:
    return list(tiny_models.WORDS)
