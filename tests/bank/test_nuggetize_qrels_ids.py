"""`bank nuggetize --qrels` with qrels that judge other passages than the pool's (issue 40, item 6):
one error saying the two files share no id, with an id of each, not "no passage is judged that
relevant". Qrels that share ids but judge none relevant enough keep the old message."""

from __future__ import annotations

import json

from rubric.data.jsonl import write_passages
from rubric.data.models import FullParagraphData, ParagraphData, QueryWithFullParagraphList


def pool(path):
    paragraphs = [
        FullParagraphData(paragraph_id=pid, text=f"text of {pid}", paragraph_data=ParagraphData())
        for pid in ("7130204", "2216743")
    ]
    write_passages(path, [QueryWithFullParagraphList(queryId="2024-145979", paragraphs=paragraphs)])
    return path


def nuggetize(cli, tmp_path, qrels):
    passages = pool(tmp_path / "pool.jsonl.gz")
    (tmp_path / "topics.json").write_text(json.dumps({"2024-145979": "what is a segment"}))
    out = tmp_path / "nuggets.jsonl.gz"
    args = ["--passages", passages, "--topics", tmp_path / "topics.json", "--qrels", qrels]
    r = cli("bank", "nuggetize", *args, "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "-o", out)
    assert not out.exists()
    return r


def test_qrels_sharing_no_id_with_the_pool(cli, user_error, tmp_path):
    qrels = tmp_path / "qrels.rag24.txt"
    qrels.write_text(
        "2024-145979 1 msmarco_v2.1_doc_10_1346272776#5 3\n2024-145979 1 msmarco_v2.1_doc_13_1#0 0\n"
    )
    r = nuggetize(cli, tmp_path, qrels)
    user_error(
        r, "--qrels", "share no (query, passage id) pair", "2024-145979 msmarco_v2.1_doc_10_1346272776#5"
    )
    assert "no passage is judged that relevant" not in r.stderr


def test_qrels_sharing_ids_but_judging_none_relevant(cli, user_error, tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("2024-145979 0 7130204 0\n")
    user_error(nuggetize(cli, tmp_path, qrels), "no passage is judged that relevant")
