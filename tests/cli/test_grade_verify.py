"""`rubric grade` with the answer-verification prompt and a tiny offline T5, through the CLI.

Stage 1 must extract exactly the answers of the plain answer-key prompt (from the shared cache);
stage 2's verdicts are recomputed here by asking the same model the verification prompts.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from helpers import BANKS, ROOT, TINY
from helpers import cli as root_conftest

VERIFY = "QuestionCompleteConcisePromptWithT5VerifiedAnswerKey2"
ANSWER_KEY = "QuestionCompleteConcisePromptWithAnswerKey2"
GOLD = {  # question text -> gold answers (none: not verifiable, in neither list)
    "Where do bees store nectar?": ["in their honey stomach", "honey stomach"],
    "What do bees collect?": ["nectar"],
    "Why does honey keep for years?": [],
    "What scatters light?": ["molecules of the air"],
    "What pulls the oceans?": ["gravity of the moon"],
}
QUERY = {"Where": "q1", "What do": "q1", "Why": "q1", "What s": "q2", "What p": "q3"}


def lines(path: Path) -> list:
    return [json.loads(x) for x in gzip.decompress(path.read_bytes()).decode().splitlines()]


@pytest.fixture(scope="module")
def setup(tmp_path_factory, t5_dir):
    """A tiny T5, the tiny pool and a bank with gold answers."""
    root = tmp_path_factory.mktemp("verify")
    model = t5_dir
    texts = dict(line.split("\t") for line in (TINY / "collection.tsv").read_text().splitlines())
    ranked: dict[str, list] = {}
    for line in (TINY / "run.alpha").read_text().splitlines():
        qid, _, doc, *_ = line.split()
        ranked.setdefault(qid, []).append({"paragraph_id": doc, "text": texts[doc]})
    pool = root / "passages.jsonl.gz"
    with gzip.open(pool, "wt") as f:
        f.write("".join(json.dumps([q, ps]) + "\n" for q, ps in ranked.items()))
    banks: dict[str, list] = {}
    for n, (text, gold) in enumerate(GOLD.items()):
        qid = next(q for prefix, q in QUERY.items() if text.startswith(prefix))
        item = {"query_id": qid, "question_id": f"{qid}/t{n}", "question_text": text}
        banks.setdefault(qid, []).append(item | ({"gold_answers": gold} if gold else {}))
    bank = root / "bank.jsonl"
    bank.write_text("".join(json.dumps({"query_id": q, "items": its}) + "\n" for q, its in banks.items()))
    return root, model, pool, bank


def test_two_stages_with_a_tiny_t5(setup):
    from rubric.grading.verification import verification_prompts
    from rubric.llm.base import Request
    from rubric.llm.registry import make_backend
    from rubric.prompting.parse import is_ill_formed, is_unanswerable, yes_no
    from rubric.prompting.prompts import get_prompt

    root, model, pool, bank = setup
    args = [pool, "--bank", bank, "--model", model, "--max-new-tokens", "4", "--cache", root / "c.sqlite"]
    # both prompts in one run: the verify prompt's extraction stage finds the answer-key prompt's
    # answers in the cache
    r = root_conftest.run_cli("grade", *args, "-p", ANSWER_KEY, "-p", VERIFY, "-o", root / "out.jsonl.gz")
    assert r.returncode == 0, r.stderr
    graded = lines(root / "out.jsonl.gz")
    items = {it["question_id"]: it for b in map(json.loads, bank.open()) for it in b["items"]}
    prompt = get_prompt(VERIFY)
    asks: list[tuple[dict, str, list[str]]] = []  # (record, item id, verification prompts)
    for _, ps in graded:
        for p in ps:
            key, rec = p["exam_grades"]
            assert key["prompt_info"]["prompt_class"] == ANSWER_KEY
            assert rec["answers"] == key["answers"]  # stage 1 = the answer-key prompt
            assert rec["prompt_info"]["prompt_class"] == VERIFY and rec["llm_options"]["max_new_tokens"] == 4
            for item_id, answer in rec["answers"]:
                it = items[item_id]
                if not it.get("gold_answers"):
                    assert item_id not in rec["correctAnswered"] + rec["wrongAnswered"]
                elif is_unanswerable(answer) or is_ill_formed(answer):
                    assert item_id in rec["wrongAnswered"]
                else:
                    texts = verification_prompts(
                        prompt, it["question_text"], answer.strip(), it["gold_answers"]
                    )
                    asks.append((rec, item_id, texts))
    assert asks  # the random model's answers (digits, words) get verified
    pairs = sum(len(ps) * {"q1": 3, "q2": 1, "q3": 1}[q] for q, ps in graded)
    n = sum(len(t) for _, _, t in asks)
    # stage 1 comes from the cache; every verification prompt is new
    assert f"{2 * pairs} pairs graded, {n} answers verified, {pairs} from cache" in r.stderr
    backend = make_backend("hf-seq2seq", str(model), device="cpu", dtype="float32", max_new_tokens=4)
    unique = list(dict.fromkeys(t for _, _, ts in asks for t in ts))
    said = dict(zip(unique, [r.text for r in backend.generate([Request(t) for t in unique])], strict=True))
    for rec, item_id, texts in asks:
        correct = any(yes_no(said[t]) is True for t in texts)
        assert item_id in (rec["correctAnswered"] if correct else rec["wrongAnswered"])


def test_verify_prompt_user_errors(cli, user_error, tmp_path, setup):
    root, model, pool, bank = setup
    out = tmp_path / "x.jsonl.gz"
    nuggets = BANKS / "nuggets.jsonl"
    user_error(
        cli("grade", pool, "--bank", nuggets, "-p", VERIFY, "--model", model, "-o", out),
        f"--prompt {VERIFY}: grades question items, but the bank holds nugget items",
    )
    user_error(
        cli("grade", pool, "--bank", bank, "-p", VERIFY, "--backend", "hf-qa", "--model", model, "-o", out),
        "a verify prompt asks the LLM yes/no questions; the hf-qa backend only extracts answers",
    )
    mine = tmp_path / "mine.toml"
    shipped = ROOT / "prompts" / f"{VERIFY}.toml"
    text = shipped.read_text().replace('name = "', 'name = "Mine', 1)
    mine.write_text(text.replace('answer_prompt = "QuestionCompleteConcisePromptWithAnswerKey2"', ""))
    user_error(
        cli(
            "grade",
            pool,
            "--bank",
            bank,
            "-p",
            "Mine" + VERIFY,
            "--prompt-file",
            mine,
            "--model",
            model,
            "-o",
            out,
        ),
        f"{mine}: a verify prompt needs answer_prompt = NAME",
    )
    mine.write_text(text.replace(ANSWER_KEY, "QuestionSelfRatedUnanswerablePromptWithChoices"))
    user_error(
        cli(
            "grade",
            pool,
            "--bank",
            bank,
            "-p",
            "Mine" + VERIFY,
            "--prompt-file",
            mine,
            "--model",
            model,
            "-o",
            out,
        ),
        "it must be a question prompt that extracts a free-text answer",
    )
    assert not out.exists()
