"""`rubric convert` end to end through the real CLI (subprocess, real files)."""

from __future__ import annotations

import gzip
import json

from rubric.data.jsonl import read_passages


def test_help_lists_only_built_groups(cli):
    r = cli("--help")
    assert r.returncode == 0
    assert "convert" in r.stdout


def test_convert_runs_pools_top_k_and_judged(cli, tiny, tmp_path):
    out = tmp_path / "passages.jsonl.gz"
    r = cli(
        "convert",
        "runs",
        "--topics",
        tiny / "queries.tsv",
        "--collection",
        tiny / "collection.tsv",
        "--qrels",
        tiny / "qrels.txt",
        "--top-k",
        "2",
        tiny / "run.alpha",
        "--run",
        tiny / "run.beta",
        "-o",
        out,
    )
    assert r.returncode == 0, r.stderr
    assert "3 queries" in r.stderr and "warning" not in r.stderr
    queries = {q.queryId: q for q in read_passages(out)}
    assert list(queries) == ["q1", "q2", "q3"]
    q1 = {p.paragraph_id: p for p in queries["q1"].paragraphs}
    # judged d1-d4 plus top-2 of alpha (d2, d1) and beta (d4, d3); d12 is alpha's rank 3: not pooled
    assert set(q1) == {"d1", "d2", "d3", "d4"}
    assert q1["d2"].paragraph_data.judgments[0].relevance == 3
    assert q1["d2"].paragraph_data.judgments[0].titleQuery == "how do bees make honey"
    assert [(r.method, r.rank) for r in q1["d2"].paragraph_data.rankings] == [("alpha", 1)]
    assert q1["d1"].text.startswith("Bees collect nectar")
    q2 = {p.paragraph_id: p for p in queries["q2"].paragraphs}
    # beta ties d5/d6 at 0.5: trec_eval order puts d6 (docid descending) first
    assert [(r.method, r.rank) for r in q2["d6"].paragraph_data.rankings] == [("beta", 1)]
    assert ("beta", 2) in [(r.method, r.rank) for r in q2["d5"].paragraph_data.rankings]
    # best-ranked passages first
    assert queries["q1"].paragraphs[0].paragraph_id in {"d2", "d4"}


def test_convert_runs_name_from_file_and_directory(cli, tiny, tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "input.first.gz").write_bytes(gzip.compress((tiny / "run.alpha").read_bytes()))
    out = tmp_path / "p.jsonl.gz"
    r = cli(
        "convert",
        "runs",
        "--topics",
        tiny / "queries.tsv",
        "-C",
        tiny / "collection.tsv",
        "--name-from",
        "file",
        "--run",
        runs,
        "-o",
        out,
    )
    assert r.returncode == 0, r.stderr
    methods = {e.method for q in read_passages(out) for p in q.paragraphs for e in p.paragraph_data.rankings}
    assert methods == {"first"}


def test_missing_text_is_an_error_unless_allowed(cli, tiny, tmp_path, user_error):
    coll = tmp_path / "partial.tsv"
    coll.write_text(
        "\n".join(
            line
            for line in (tiny / "collection.tsv").read_text().splitlines()
            if not line.startswith("d12\t")
        )
        + "\n"
    )
    out = tmp_path / "p.jsonl.gz"
    args = [
        "convert",
        "runs",
        "--topics",
        tiny / "queries.tsv",
        "-C",
        coll,
        "--top-k",
        "3",
        tiny / "run.alpha",
        "-o",
        out,
    ]
    r = cli(*args)
    user_error(r, "no text for 1 pooled passages (first: d12)", "--allow-missing")
    assert not out.exists()
    r = cli(*args, "--allow-missing")
    assert r.returncode == 0 and "left out 1 pooled passages" in r.stderr
    assert "d12" not in {p.paragraph_id for q in read_passages(out) for p in q.paragraphs}


def test_bad_run_line_exits_2_naming_file_and_line(cli, tiny, tmp_path, user_error):
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 d1 1 2.0 x\nq1 Q0 d2 2 1.0\n")
    out = tmp_path / "p.jsonl.gz"
    r = cli(
        "convert", "runs", "--topics", tiny / "queries.tsv", "-C", tiny / "collection.tsv", bad, "-o", out
    )
    user_error(r, f"{bad}:2:", "6 columns")
    assert len(r.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_convert_rag_sentences_and_word_segments(cli, tiny, tmp_path):
    out = tmp_path / "rag.jsonl.gz"
    topics = tmp_path / "topics.json"
    r = cli("convert", "rag", "--answers", tiny / "rag.jsonl", "-o", out, "--queries-out", topics)
    assert r.returncode == 0, r.stderr
    (q1,) = read_passages(out)
    by_run: dict[str, list] = {}
    for p in q1.paragraphs:
        (rank,) = p.paragraph_data.rankings
        by_run.setdefault(rank.method, []).append((rank.rank, p.text, p.model_extra["citations"]))
    assert by_run["ragA"] == [
        (1, "Bees gather nectar from flowers.", ["d1"]),
        (2, "They evaporate its water in the hive until it becomes honey.", ["d2"]),
    ]
    assert by_run["ragB"][0][0] == 1
    assert json.loads(topics.read_text()) == {"q1": "how do bees make honey"}

    r = cli("convert", "rag", "-a", tiny / "rag.jsonl", "--segment", "words:8", "-o", out)
    assert r.returncode == 0, r.stderr
    (q1,) = read_passages(out)
    texts = [p.text for p in q1.paragraphs if p.paragraph_data.rankings[0].method == "ragB"]
    assert all(len(t.split()) <= 8 for t in texts) and len(texts) == 3
    assert (
        " ".join(texts).split()
        == (
            "Honey is nectar that bees have thickened by fanning it "
            "with their wings in the hive for several days."
        ).split()
    )


def test_convert_rag_bad_segment_option(cli, tiny, tmp_path, user_error):
    r = cli("convert", "rag", "-a", tiny / "rag.jsonl", "--segment", "words:0", "-o", tmp_path / "x.jsonl.gz")
    user_error(r, "--segment")


def test_convert_queries_between_formats(cli, tiny, tmp_path):
    out = tmp_path / "q.json"
    r = cli("convert", "queries", tiny / "queries.tsv", "-o", out)
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text())["q2"] == "why is the sky blue"
    r = cli("convert", "queries", out, "-o", tmp_path / "q.tsv", "--format", "tsv")
    assert (tmp_path / "q.tsv").read_text() == (tiny / "queries.tsv").read_text()


def test_bad_passages_inputs_exit_2(cli, tiny, tmp_path, user_error):
    trunc = tmp_path / "t.jsonl.gz"
    payload = "".join(
        json.dumps(["q", [{"paragraph_id": f"p{i}", "text": "x" * 50}]]) + "\n" for i in range(300)
    )
    trunc.write_bytes(gzip.compress(payload.encode())[:500])
    r = cli(
        "convert",
        "runs",
        "--topics",
        trunc,
        "-C",
        tiny / "collection.tsv",
        tiny / "run.alpha",
        "-o",
        tmp_path / "o",
    )
    user_error(r, str(trunc))


def _passage(pid: str) -> dict:
    return {
        "paragraph_id": pid,
        "text": "x",
        "paragraph": "",
        "paragraph_data": {"judgments": [], "rankings": []},
    }


def test_check_summarises_valid_files(cli, tmp_path):
    f = tmp_path / "p.jsonl"
    f.write_text(json.dumps(["q1", [_passage("a"), _passage("b")]]) + "\n")
    bank = tmp_path / "bank.jsonl"
    bank.write_text(
        json.dumps(
            {"query_id": "q1", "items": [{"query_id": "q1", "question_id": "q1/x", "question_text": "Why?"}]}
        )
        + "\n"
    )
    r = cli("convert", "check", f, bank)
    assert r.returncode == 0, r.stderr
    assert "1 queries, 2 passages, 0 judged, 0 runs" in r.stdout
    assert "test bank, 1 queries/facets, 1 items (question)" in r.stdout


def test_check_reports_each_kind_of_bad_input(cli, tmp_path, user_error):
    good = json.dumps(["q1", [_passage("a")]])
    trunc = tmp_path / "trunc.jsonl.gz"
    lines = "".join(json.dumps([f"q{i}", [_passage("a")]]) + "\n" for i in range(2000))
    trunc.write_bytes(gzip.compress(lines.encode())[:300])
    user_error(cli("convert", "check", trunc), f"{trunc}: damaged gzip file")

    broken = tmp_path / "broken.jsonl"
    broken.write_text(good + "\n" + '["q2", [{"paragraph_id": "b",' + "\n")
    r = cli("convert", "check", broken)
    user_error(r, f"{broken}:2: not valid JSON")
    assert len(r.stderr.strip().splitlines()) == 1

    missing = tmp_path / "missing.jsonl"
    p = _passage("c")
    del p["paragraph_id"]
    other = json.dumps(["q2", [_passage("a")]])
    missing.write_text(good + "\n" + other + "\n" + json.dumps(["q3", [p]]) + "\n")
    user_error(cli("convert", "check", missing), f"{missing}:3: paragraphs[0].paragraph_id: Field required")


def test_run_without_any_query_of_the_queries_file_is_flagged(cli, tiny, tmp_path):
    other = tmp_path / "other.run"
    other.write_text("Q-1 Q0 d1 1 1.0 other\n")
    out = tmp_path / "p.jsonl.gz"
    r = cli(
        "convert",
        "runs",
        "--topics",
        tiny / "queries.tsv",
        "-C",
        tiny / "collection.tsv",
        tiny / "run.alpha",
        other,
        "-o",
        out,
    )
    assert r.returncode == 0, r.stderr
    assert "no query of" in r.stderr and "other" in r.stderr
