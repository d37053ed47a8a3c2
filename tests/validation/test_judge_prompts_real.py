"""The UMBRELA and LLMJudge prompt files render exactly the reference texts (castorini/umbrela's
qrel_zeroshot_bing.yaml, llm4eval/LLMJudge's sample-prompt.txt)."""

from __future__ import annotations

import pytest

from rubric.prompting.prompts import get_prompt

QUERY = "how long is life cycle of flea"
PASSAGE = "The life cycle of a flea can last anywhere from 20 days to an entire year. {not a placeholder}"


def test_umbrela_renders_the_zeroshot_bing_prompt(shared):
    yaml = pytest.importorskip("yaml")

    reference = yaml.safe_load(shared("prompts", "umbrela", "qrel_zeroshot_bing.yaml").read_text())
    assert reference["system_message"] == ""
    expected = reference["prefix_user"].format(query=QUERY, passage=PASSAGE)  # as umbrela renders it
    p = get_prompt("UMBRELA")
    # the template's system message is empty; UMBRELA's GPT judge sends its own (run_gpt)
    assert p.system == "You are a helpful assistant."
    assert p.render(query=QUERY, context=PASSAGE) == expected


def test_llmjudge_renders_the_sample_prompt(shared):
    reference = shared("llm4eval-LLMJudge", "sample-prompt.txt").read_text(encoding="utf-8")
    expected = reference.replace("{query}", QUERY).replace("{passage}", PASSAGE)
    assert get_prompt("LLMJudge").render(query=QUERY, context=PASSAGE) == expected
