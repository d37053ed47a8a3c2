"""The shipped prompt files: complete, loadable, and the exact text the original tool sent.

The expected strings are built here the way the original exam_pp code built them (its class
attributes and f-strings), independently of the TOML files, so a file edited by hand, or an
editor that strips trailing blanks, fails these tests.
"""

from __future__ import annotations

import pytest

from rubric.errors import UserError
from rubric.prompting.parse import get_parser
from rubric.prompting.prompts import get_prompt, load_prompt_file, shipped_prompts

# exam_pp/test_bank_prompts.py: QuestionSelfRatedUnanswerablePromptWithChoices.pretext
Q_PRETEXT = """Can the question be answered based on the available context? choose one:
        - 5: The answer is highly relevant, complete, and accurate.
        - 4: The answer is mostly relevant and complete but may have minor gaps or inaccuracies.
        - 3: The answer is partially relevant and complete, with noticeable gaps or inaccuracies.
        - 2: The answer has limited relevance and completeness, with significant gaps or inaccuracies.
        - 1: The answer is minimally relevant or complete, with substantial shortcomings.
        - 0: The answer is not relevant or complete at all.
        """
# NuggetSelfRatedPrompt.pretext
N_PRETEXT = """Given the context, evaluate the coverage of the specified key fact (nugget). Use this scale:
        - 5: Detailed, clear coverage.
        - 4: Sufficient coverage, minor omissions.
        - 3: Mentioned, some inaccuracies or lacks detail.
        - 2: Briefly mentioned, significant omissions or inaccuracies.
        - 1: Minimally mentioned, largely inaccurate.
        - 0: Not mentioned at all.
        """
Q, N, C, QUERY = "How do plants make sugar?", "carbon dioxide", "Leaves take in CO2.", "plant food"


def original(name: str) -> str:
    """The prompt the original code built for (Q or N, C, QUERY), before context truncation."""
    question_or_nugget = {
        "QuestionSelfRatedUnanswerablePromptWithChoices": f"{Q_PRETEXT}\n Question: {Q}\n",
        "NuggetSelfRatedPrompt": f"{N_PRETEXT}\n Key fact: {N}\n",
        "QuestionCompleteConciseUnanswerablePromptWithChoices": "provide a complete and concise answer to "
        f"the question based on the context. Question: {Q}\n",
        "QuestionCompleteConcisePromptWithAnswerKey2": "provide a complete and concise answer to the "
        f"question based on the context. Question: {Q}\n",
        "NuggetExtractionPrompt": "Extract the passage from the text that best relates to the key fact "
        f"(nugget), ensuring relevance and clarity. Key Fact: {N}\n",
    }
    if name in question_or_nugget:
        return question_or_nugget[name] + f"Context: {C}"
    return {
        "FagB": "Instruction: Indicate if the passage is relevant for the question. Respond with 'Yes' or "
        f"'No'.\n\nQuestion: {QUERY}\nPassage: {C}\nAnswer:\n",
        "HELM": "Instruction: Does the passage answer the query? Respond with 'Yes' or 'No'.\n\n"
        f"Query: {QUERY}\nPassage: {C}\nAnswer:\n",
        "Sun": "Instruction: Given a passage and a query, predict whether the passage includes an answer to "
        f'the query by producing either "Yes" or "No".\nQuery: {QUERY}\nPassage: {C}\nAnswer:\n',
        "Thomas": "Instruction: You are a search quality rater evaluating the relevance of passages. Given a "
        "query and a passage, you must provide a score on an integer scale of 0 to 2 with the following "
        "meanings:\n2 = highly relevant, very helpful for this query\n1 = relevant, may be partly helpful "
        "but might contain other irrelevant content\n0 = not relevant, should never be shown for this query"
        f"\n\nQuery: {QUERY}\nPassage: {C}\nAnswer:\n",
    }[name]


EXACT = [
    "QuestionSelfRatedUnanswerablePromptWithChoices",
    "NuggetSelfRatedPrompt",
    "QuestionCompleteConciseUnanswerablePromptWithChoices",
    "QuestionCompleteConcisePromptWithAnswerKey2",
    "NuggetExtractionPrompt",
    "FagB",
    "HELM",
    "Sun",
    "Thomas",
]


@pytest.mark.parametrize("name", EXACT)
def test_rendered_prompt_is_the_original_text(name):
    assert get_prompt(name).render(question=Q, nugget=N, context=C, query=QUERY) == original(name)


def test_verification_prompt_is_the_original_text():
    p = get_prompt("QuestionCompleteConcisePromptWithT5VerifiedAnswerKey2")
    got = p.render(
        question="During very wet times, the water table will...", gold_answers="rise", answer="increase"
    )
    assert got == (
        'For the question "During very wet times, the water table will..." the correct answer is "rise". '
        'Is "increase" an equally correct response to this question? Answer yes or no.'
    )


@pytest.mark.parametrize("name", ["FagB_few", "Sun_few"])
def test_few_shot_prompts_keep_the_original_quirks(name):
    text = get_prompt(name).render(query=QUERY, context=C)
    assert text.count("Wells Fargo") == 6 and text.count("eyedrops") == 2
    assert "1 Money in \u2014 deposits." in text  # em dash of the original
    assert text.endswith(
        f"Passage: {C}\nQuestion: {QUERY}\nAnswer:\n"
        if name == "FagB_few"
        else (f"Passage: {C}\nQuery: {QUERY}\n\nDoes the passage answer the query?\nAnswer:\n")
    )
    if name == "FagB_few":  # trailing blanks of the original survive in the file
        assert "Question: how many eye drops per ml \nAnswer: Yes \n\n" in text
        assert "so many b\nank account options" in text
    else:
        assert "Query: how many eye drops per ml\nDoes the passage answer the query?\nAnswer: Yes\n\n" in text


REQUIRED = {
    "QuestionSelfRatedUnanswerablePromptWithChoices": ("question", "self_rating", ["question", "context"]),
    "NuggetSelfRatedPrompt": ("nugget", "self_rating", ["nugget", "context"]),
    "QuestionCompleteConciseUnanswerablePromptWithChoices": (
        "question",
        "extraction",
        ["question", "context"],
    ),
    "NuggetExtractionPrompt": ("nugget", "extraction", ["nugget", "context"]),
    "QuestionCompleteConcisePromptWithAnswerKey2": ("question", "answer_key", ["question", "context"]),
    "QuestionCompleteConcisePromptWithT5VerifiedAnswerKey2": (
        "verify",
        "verify",
        ["question", "gold_answers", "answer"],
    ),
    "FagB": ("direct", "yes_no", ["query", "context"]),
    "FagB_few": ("direct", "yes_no", ["context", "query"]),
    "HELM": ("direct", "yes_no", ["query", "context"]),
    "Sun": ("direct", "yes_no", ["query", "context"]),
    "Sun_few": ("direct", "yes_no", ["context", "query"]),
    "Thomas": ("direct", "rating_0_2", ["query", "context"]),
}


@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_every_paper_prompt_is_shipped(name):
    kind, parser, placeholders = REQUIRED[name]
    p = shipped_prompts()[name]
    assert (p.kind, p.parser, p.placeholders) == (kind, parser, placeholders)
    assert p.prompt_info["prompt_class"] == name
    assert set(p.prompt_info) >= {"prompt_class", "context_first", "check_unanswerable", "is_self_rated"}
    assert p.choices == get_parser(parser).choices  # the file records the parser's choices
    assert p.description and p.source


def test_paper_names_are_aliases_of_the_original_classes():
    assert get_prompt("FaggioliB").name == "FagB"
    assert get_prompt("FaggioliB_few").name == "FagB_few"


def test_self_rated_flags():
    rated = {n for n, p in shipped_prompts().items() if p.prompt_info.get("is_self_rated")}
    assert rated == {
        "QuestionSelfRatedUnanswerablePromptWithChoices", "NuggetSelfRatedPrompt", "Thomas",
        "UMBRELA", "LLMJudge", "QuestionSelfRatedPrompt", "QuestionSelfRatedPromptTolerant",
    }  # fmt: skip


def test_user_prompt_file_with_alias_and_choices(tmp_path):
    f = tmp_path / "umbrela.toml"
    f.write_text(
        'name = "MyRelevance"\naliases = ["mine"]\nkind = "direct"\nparser = "rating_0_3"\n'
        'choices = ["0", "1", "2", "3"]\n'
        "template = '''Query: {query}\nPassage: {context}\nScore 0-3:'''\n"
        '[prompt_info]\nprompt_class = "MyRelevance"\nis_self_rated = true\n',
        encoding="utf-8",
    )
    p = get_prompt("mine", [f])
    assert p.name == "MyRelevance" and p.choices == ("0", "1", "2", "3")
    assert get_parser(p.parser).parse("3") == 3
    assert p.render(query="q", context="c") == "Query: q\nPassage: c\nScore 0-3:"


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (
            'name = "X"\nkind = "direct"\nparser = "nope"\ntemplate = "{query}"\n',
            "parser: unknown answer parser",
        ),
        (
            'name = "X"\nkind = "direct"\nparser = "yes_no"\nchoices = "yes"\ntemplate = "{query}"\n',
            "choices must",
        ),
        ('name = "X"\nkind = "direct"\nparser = "yes_no"\n', "missing or empty field 'template'"),
        (
            'name = "X"\nkind = "direct"\nparser = "yes_no"\ntemplate = "{query}"\nprompt_info = 3\n',
            "prompt_info",
        ),
        ("name = = 1\n", "not a valid TOML prompt file"),
        (
            'name = "X"\nkind = "direct"\nparser = "yes_no"\ntemplate = "{query} {context}"\n'
            "[decoding]\ntop_p = 3\n",
            "[decoding] top_p must be a number from 0 to 1, got 3",
        ),
        (
            'name = "X"\nkind = "direct"\nparser = "yes_no"\ntemplate = "{query} {context}"\n'
            "[decoding]\nmax_tokens = 1.5\n",
            "[decoding] max_tokens must be an integer",
        ),
        (
            'name = "X"\nkind = "direct"\nparser = "yes_no"\ntemplate = "{query} {context}"\n'
            "[decoding]\nseed = 1\n",
            "[decoding] seed is unknown",
        ),
        (
            'name = "X"\nkind = "direct"\nparser = "yes_no"\ntemplate = "{query} {context}"\n'
            'system_api_only = "yes"\n',
            "system_api_only must be true or false",
        ),
    ],
)
def test_bad_prompt_files_name_the_file(tmp_path, body, fragment):
    f = tmp_path / "bad.toml"
    f.write_text(body, encoding="utf-8")
    with pytest.raises(UserError) as e:
        load_prompt_file(f)
    assert str(e.value).startswith(str(f)) and fragment in str(e.value)


def test_other_kinds_keep_their_own_parsers(tmp_path):
    # generation / assignment prompts (bank engineer's) name parsers that live elsewhere
    f = tmp_path / "gen.toml"
    f.write_text(
        'name = "G"\nkind = "generate"\nparser = "json_list"\ntemplate = "{query}"\n', encoding="utf-8"
    )
    assert load_prompt_file(f).choices is None


def test_render_around_context_puts_the_passage_last_to_cut():
    p = get_prompt("NuggetSelfRatedPrompt")
    before, after = p.render_around_context(nugget=N)
    assert before + C + after == original("NuggetSelfRatedPrompt") and after == ""
    before, after = get_prompt("FagB_few").render_around_context(query=QUERY)
    assert before.endswith("Answer: Yes\n\nPassage: ") and after == f"\nQuestion: {QUERY}\nAnswer:\n"
    with pytest.raises(UserError, match="exactly once"):
        get_prompt("QuestionCompleteConcisePromptWithT5VerifiedAnswerKey2").render_around_context()


def test_prompt_types_are_the_original_tools():
    types = {n: p.prompt_type for n, p in shipped_prompts().items()}
    assert types["NuggetSelfRatedPrompt"] == "nugget" and types["HELM"] == "direct_grading"
    assert types["QuestionCompleteConcisePromptWithAnswerKey2"] == "question"
