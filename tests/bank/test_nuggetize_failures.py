"""AutoNuggetizer keeps going when a window or an importance batch stays unreadable: the failure
is reported and recorded, earlier nuggets are kept, unlabelled nuggets stay (after labelled ones)."""

from __future__ import annotations

from helpers import openai_server as server
from rubric.bank.nuggetize import nuggetize
from rubric.llm.openai_chat import OpenAIChat
from rubric.prompting.prompts import get_prompt


def test_failed_window_and_importance_are_recorded_not_dropped():
    def answer(user: str, system: str | None) -> str:
        if "BROKEN" in user and "Update the list" in user:
            return "I would rather not."
        if "vital or okay" in user and "Zebras" in user:
            return '["vital"]'  # wrong count for a batch of two: unreadable
        return server.scripted_answer(user, system)

    passages = {
        "q1": ["Bees collect nectar from flowers daily.", "BROKEN passage that the model refuses."],
        "q2": ["Zebras have black and white stripes.", "Minor fact zebras live in herds."],
    }
    with server.serve(answer=answer) as srv:
        backend = OpenAIChat(model="m", base_url=srv.url, retry_base=0.01)  # no cache: every prompt asked
        banks, errors = nuggetize(
            {"q1": "bees", "q2": "zebras"},
            passages,
            get_prompt("AutoNuggetizerCreate"),
            importance_prompt=get_prompt("AutoNuggetizerImportance"),
            backend=backend,
            window=1,
            retries=1,
        )
    by_q = {b.query_id: b for b in banks}
    assert [i.nugget_text for i in by_q["q1"].items] == ["Bees collect nectar from flowers"]
    assert by_q["q1"].info["failed_windows"] == [2] and by_q["q1"].items[0].importance == "vital"
    assert [(i.nugget_text, i.importance) for i in by_q["q2"].items] == [
        ("Zebras have black and white", None),
        ("Minor fact zebras live in", None),
    ]
    assert by_q["q2"].info["unlabelled"] == 2
    assert len(errors) == 2
    assert errors[0].startswith("q1 window 2: unreadable answer after 2 attempt(s)")
    assert errors[1].startswith("q2 importance of nuggets 1-2: unreadable answer")
