"""``irds:ID``: topics, qrels and passage texts from the ir_datasets package (the ``irds`` extra),
on a local dataset registered in the test."""

from __future__ import annotations

import pytest

pytest.importorskip("ir_datasets")

from helpers import irds_local  # noqa: E402
from rubric.data.collection import load_texts  # noqa: E402
from rubric.data.irds import irds_id  # noqa: E402
from rubric.data.queries import read_queries  # noqa: E402
from rubric.data.trec import read_qrels  # noqa: E402
from rubric.errors import UserError  # noqa: E402


@pytest.fixture
def dataset(tmp_path):
    return irds_local.register(tmp_path / "ds")


def test_the_prefix_names_a_dataset_and_nothing_else():
    assert irds_id("irds:msmarco-passage/trec-dl-2020/judged") == "msmarco-passage/trec-dl-2020/judged"
    assert irds_id("topics.tsv") is None and irds_id("dir/irds:x") is None


def test_topics_qrels_and_texts_as_the_files_give_them(dataset):
    assert read_queries(f"irds:{dataset}") == irds_local.QUERIES
    assert read_qrels(f"irds:{dataset}") == {"q1": {"d1": 2, "d3": 0}, "q2": {"d2": 3, "d4": 1}}
    texts = load_texts([f"irds:{dataset}"], {"d2", "d4", "absent"})
    assert texts == {"d2": irds_local.DOCS["d2"], "d4": irds_local.DOCS["d4"]}


def test_texts_are_looked_up_in_the_store_not_read_from_the_corpus(tmp_path, dataset):
    """Once ir_datasets has built its document store, the corpus file can go: the pooled ids are
    looked up (``docs_store().get_many``), nothing iterates the documents."""
    import ir_datasets

    ir_datasets.load(dataset).docs_store().build()
    (tmp_path / "ds" / "docs.tsv").unlink()
    assert load_texts([f"irds:{dataset}"], {"d1"}) == {"d1": irds_local.DOCS["d1"]}
    with pytest.raises(UserError, match="a corpus is not read whole"):
        load_texts([f"irds:{dataset}"], None)


def test_a_text_in_a_file_and_another_in_the_dataset_name_both(tmp_path, dataset):
    other = tmp_path / "collection.tsv"
    other.write_text("d1\tanother text\n")
    with pytest.raises(
        UserError,
        match=rf"irds:{dataset}: document d1 again, with another text \(first at .*collection.tsv:1\)",
    ):
        load_texts([other, f"irds:{dataset}"], {"d1"})
    same = tmp_path / "same.tsv"
    same.write_text(f"d1\t{irds_local.DOCS['d1']}\n")
    assert load_texts([same, f"irds:{dataset}"], {"d1"}) == {"d1": irds_local.DOCS["d1"]}


@pytest.mark.parametrize(
    ("parts", "read", "message"),
    [
        ({"queries": False}, read_queries, "this ir_datasets dataset has no queries"),
        ({"qrels": False}, read_qrels, "this ir_datasets dataset has no relevance judgments"),
        ({"docs": False}, lambda s: load_texts([s], {"d1"}), "this ir_datasets dataset has no documents"),
    ],
)
def test_a_dataset_without_the_part_asked_for(tmp_path, parts, read, message):
    name = irds_local.register(tmp_path / "part", **parts)
    with pytest.raises(UserError, match=f"^irds:{name}: {message}"):
        read(f"irds:{name}")


def test_unknown_empty_and_unreadable_datasets(tmp_path):
    with pytest.raises(UserError, match=r"^irds:no-such/dataset: no such ir_datasets dataset"):
        read_queries("irds:no-such/dataset")
    with pytest.raises(UserError, match=r"^irds:: give a dataset id after irds:"):
        read_qrels("irds:")
    name = irds_local.register(tmp_path / "gone")
    (tmp_path / "gone" / "qrels.txt").unlink()
    with pytest.raises(
        UserError, match=rf"^irds:{name}: ir_datasets could not provide the relevance judgments: "
    ):
        read_qrels(f"irds:{name}")


def test_convert_runs_and_leaderboard_from_an_ir_datasets_id(cli, tmp_path, dataset):
    """`convert runs` with topics, passage texts and qrels from one dataset id writes the same
    passages file as with the dataset's own files; `evaluate leaderboard --qrels irds:ID` prints
    the same leaderboard as with the qrels file."""
    from rubric.data.jsonl import read_passages

    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 3.0 r\nq1 Q0 d4 2 2.0 r\nq2 Q0 d3 1 1.0 r\nq2 Q0 d2 2 0.5 r\n")
    ds, src = f"irds:{dataset}", tmp_path / "ds"
    by_id, by_file = tmp_path / "by-id.jsonl.gz", tmp_path / "by-file.jsonl.gz"
    r = cli("convert", "runs", "--topics", ds, "-C", ds, "--qrels", ds, "--top-k", "1", run, "-o", by_id)
    assert r.returncode == 0, r.stderr
    assert f"wrote {by_id}: 2 queries, 5 passages (4 judged) from 1 run" in r.stderr
    files = ["--topics", src / "queries.tsv", "-C", src / "docs.tsv", "--qrels", src / "qrels.txt"]
    r = cli("convert", "runs", *files, "--top-k", "1", run, "-o", by_file)
    assert r.returncode == 0, r.stderr
    pool = {q.queryId: {p.paragraph_id: p.text for p in q.paragraphs} for q in read_passages(by_id)}
    assert pool == {q.queryId: {p.paragraph_id: p.text for p in q.paragraphs} for q in read_passages(by_file)}
    assert pool["q2"]["d3"] == irds_local.DOCS["d3"]  # retrieved, not judged: text from the store
    assert "d5" not in pool["q1"] and "d5" not in pool["q2"]
    board = ["evaluate", "leaderboard", "--run", run, "-m", "map", "-m", "P.2"]
    by_qrels_id = cli(*board, "--qrels", ds)
    assert by_qrels_id.returncode == 0, by_qrels_id.stderr
    assert by_qrels_id.stdout == cli(*board, "--qrels", src / "qrels.txt").stdout
    assert "\tmap\t" in by_qrels_id.stdout
