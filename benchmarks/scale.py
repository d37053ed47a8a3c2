"""Campaign scale on one machine: every command that reads a graded passages file, on 20k and 200k
passages, seconds and peak memory, against today's reader path (a copy of the baseline commit).

Synthesises seeded graded files the shape of a TREC RAG campaign: queries of ``--per-query``
passages (RAG 2024: 301 topics x 50 runs x 20 answer sentences is about 1,000 passages a topic),
each passage judged, ranked by two of ``--runs`` runs, and graded on ``--items`` questions by a
self-rating prompt and an answer-extraction prompt, as ``rubric grade`` writes them, and split
into four parts as ``rubric grade --shard i/4`` splits queries (for ``rubric grade merge``). The two
sizes differ in the number of queries only (the largest query is the same), so a reader whose
memory is bounded by one query has the same peak on both: the 200k/20k ratio of peak RSS is the
test of "flat in the file size".

Every command runs as a child process (``python -m rubric ...``); its peak RSS is the child's
``ru_maxrss`` (``os.wait4``); the files are made in another child, so that this process stays
small (a child's peak counts the pages it had at ``fork``). The baseline is the CLI of
``--baseline`` (default: the commit before streaming, 0a3c0e0) extracted with ``git archive``
into a temporary folder and run with PYTHONPATH pointing there, on the same files in the same
run, command by command (new, then old: a shared machine's load drifts less between the two);
outputs of both must be equal byte for byte. Note the machine's load (printed at the start and
the end): the machine may be shared.

    OMP_NUM_THREADS=1 nice python benchmarks/scale.py                  # 20k and 200k, both CLIs
    python benchmarks/scale.py --sizes 20000 --no-baseline             # quick look
    python benchmarks/scale.py --leaderboard-runs 100                  # 100 runs x 301 x 1000

The leaderboard mode reports the peak RSS of the largest process (the CLI or one of its workers;
with W workers the total is at most W + 1 times that).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = "0a3c0e0"

RATING = "QuestionSelfRatedUnanswerablePromptWithChoices"
ANSWER = "QuestionCompleteConciseUnanswerablePromptWithChoices"
LLM = "google/flan-t5-large"
WORDS = (
    "the a of cat dog river bank money loan interest rate water flow music jazz history war "
    "protein diet sleep heart study patients results trial effect measured higher lower"
).split()


def item_id(qid: str, text: str) -> str:
    return f"{qid}/{hashlib.md5(text.strip().encode()).hexdigest()}"


def synthesise(
    folder: Path, n_passages: int, n_items: int = 10, per_query: int = 1000, n_runs: int = 50, seed: int = 13
) -> dict[str, Path]:
    """Write ``graded.jsonl.gz``, ``bank.jsonl.gz``, ``bank-edited.jsonl.gz`` and ``review.json``
    into ``folder``; returns their paths by name."""
    rng = random.Random(seed)
    n_queries = max(1, -(-n_passages // per_query))
    runs = [f"run{r:02d}" for r in range(n_runs)]
    files = {
        "graded": folder / "graded.jsonl.gz",
        "bank": folder / "bank.jsonl.gz",
        "edited": folder / "bank-edited.jsonl.gz",
        "review": folder / "review.json",
    }
    actions = []
    with (
        gzip.open(files["graded"], "wt", encoding="utf-8", compresslevel=6) as out,
        gzip.open(files["bank"], "wt", encoding="utf-8") as bank,
        gzip.open(files["edited"], "wt", encoding="utf-8") as edited,
    ):
        left = n_passages
        for qi in range(n_queries):
            qid = str(1000 + qi)
            query_text = " ".join(rng.choice(WORDS) for _ in range(5))
            texts = [
                f"question {k} of query {qid}: " + " ".join(rng.choice(WORDS) for _ in range(6)) + "?"
                for k in range(n_items)
            ]
            ids = [item_id(qid, t) for t in texts]
            items = [
                {"query_id": qid, "question_id": i, "question_text": t}
                for i, t in zip(ids, texts, strict=True)
            ]
            bank.write(json.dumps({"query_id": qid, "query_text": query_text, "items": items}) + "\n")
            new_text = texts[1] + " (rewritten)"
            moved = [
                *items[2:],
                {"query_id": qid, "question_id": item_id(qid, new_text), "question_text": new_text},
            ]
            edited.write(json.dumps({"query_id": qid, "query_text": query_text, "items": moved}) + "\n")
            n = min(per_query, left)
            left -= n
            paragraphs = []
            for pi in range(n):
                pid = f"{qid}-{pi}"
                grades = [rng.choice([0, 0, 0, 1, 2, 3, 4, 4, 5]) for _ in ids]
                graded = list(zip(ids, grades, strict=True))
                rankings = [
                    {"method": runs[(pi + k * 7) % n_runs], "paragraphId": pid, "queryId": qid,
                     "rank": pi // n_runs + 1 + k, "score": round(100.0 - pi / 10 - k, 3)}
                    for k in range(2)
                ]  # fmt: skip
                paragraphs.append(
                    {
                        "paragraph_id": pid,
                        "text": " ".join(rng.choice(WORDS) for _ in range(40)),
                        "paragraph": "",
                        "paragraph_data": {
                            "judgments": [
                                {"paragraphId": pid, "query": qid, "relevance": rng.choice([0, 0, 1, 2, 3]),
                                 "titleQuery": query_text}
                            ],
                            "rankings": rankings,
                        },
                        "exam_grades": [
                            {
                                "correctAnswered": [i for i, g in zip(ids, grades, strict=True) if g >= 4],
                                "wrongAnswered": [i for i, g in zip(ids, grades, strict=True) if g < 4],
                                "answers": [[i, str(g)] for i, g in zip(ids, grades, strict=True)],
                                "llm": LLM,
                                "llm_options": {},
                                "exam_ratio": sum(g >= 4 for g in grades) / len(grades),
                                "prompt_info": {"prompt_class": RATING, "is_self_rated": True},
                                "self_ratings": [{"question_id": i, "self_rating": g} for i, g in graded],
                                "prompt_type": "question",
                            },
                            {
                                "correctAnswered": [i for i, g in zip(ids, grades, strict=True) if g],
                                "wrongAnswered": [i for i, g in zip(ids, grades, strict=True) if not g],
                                "answers": [[i, " ".join(rng.choice(WORDS) for _ in range(4))] for i in ids],
                                "llm": LLM,
                                "llm_options": {},
                                "prompt_info": {"prompt_class": ANSWER, "is_self_rated": False},
                                "prompt_type": "question",
                            },
                        ],
                    }
                )  # fmt: skip
                if pi < 3:
                    actions.append(
                        {"type": "grade", "query_id": qid, "paragraph_id": pid, "item_id": ids[pi],
                         "prompt_class": RATING, "llm": LLM, "grade": (grades[pi] + 1) % 6}
                    )  # fmt: skip
            out.write(json.dumps([qid, paragraphs], ensure_ascii=False) + "\n")
    split_shards(files["graded"], folder)
    sha = hashlib.sha256(files["graded"].read_bytes()).hexdigest()
    review = {"version": 1, "reviewer": "alice", "source": {"file": "graded.jsonl.gz", "sha256": sha},
              "actions": actions}  # fmt: skip
    files["review"].write_text(json.dumps(review))
    return files


SHARDS = 4


def shard_paths(folder: Path) -> list[Path]:
    return [folder / f"part-{i}-of-{SHARDS}.jsonl.gz" for i in range(1, SHARDS + 1)]


def split_shards(graded: Path, folder: Path) -> None:
    """The graded file's lines split into :data:`SHARDS` parts as ``rubric grade --shard i/n``
    splits queries (md5 of the query id), for ``rubric grade merge --order``."""
    outs = [gzip.open(path, "wt", encoding="utf-8", compresslevel=6) for path in shard_paths(folder)]
    try:
        with gzip.open(graded, "rt", encoding="utf-8") as lines:
            for line in lines:
                qid = json.loads(line[: line.index(",")] + "]")[0]
                outs[int(hashlib.md5(qid.encode()).hexdigest(), 16) % SHARDS].write(line)
    finally:
        for out in outs:
            out.close()


def synthesise_runs(
    folder: Path, n_runs: int = 100, n_topics: int = 301, depth: int = 1000, seed: int = 7
) -> None:
    """``runs/`` (``n_runs`` TREC runs of ``depth`` passages for each of ``n_topics`` topics) and
    ``qrels.txt`` (200 judged passages a topic, grades 0-3), seeded."""
    rng = random.Random(seed)
    (folder / "runs").mkdir(parents=True, exist_ok=True)
    pool = {t: [f"d{t}-{k}" for k in range(2 * depth)] for t in range(n_topics)}
    with open(folder / "qrels.txt", "w") as f:
        for t, docs in pool.items():
            f.writelines(f"{1000 + t} 0 {d} {rng.choice([0, 0, 1, 2, 3])}\n" for d in rng.sample(docs, 200))
    for r in range(n_runs):
        with open(folder / "runs" / f"run{r:03d}.txt", "w") as f:
            for t, docs in pool.items():
                picked = rng.sample(docs, depth)
                f.writelines(
                    f"{1000 + t} Q0 {d} {k + 1} {depth - k + rng.random():.6f} run{r:03d}\n"
                    for k, d in enumerate(picked)
                )


def leaderboard_rows(work: Path, versions: dict[str, Path], n_runs: int) -> None:
    """`evaluate leaderboard` over the synthetic runs with each version: seconds, peak RSS, output."""
    folder = work / f"runs-{n_runs}"
    if not (folder / "qrels.txt").exists():
        t0 = time.perf_counter()
        in_child(synthesise_runs, folder, n_runs)
        print(f"synthesised {n_runs} runs x 301 topics x 1000 passages in {time.perf_counter() - t0:.0f} s")
    argv = ["evaluate", "leaderboard", "--qrels", str(folder / "qrels.txt"), "--run", str(folder / "runs"),
            "-m", "ndcg_cut.10", "-m", "map", "-m", "P.10", "-m", "recall.1000"]  # fmt: skip
    found: dict[str, Path] = {}
    for name, src in versions.items():
        out = folder / f"leaderboard-{name}.tsv"
        seconds, peak, _ = run_child(src, argv, out)
        found[name] = out
        print(f"  {name} evaluate leaderboard {seconds:7.2f} s {peak:8.0f} MB (largest process)", flush=True)
    if len(found) == 2:
        import filecmp

        same = filecmp.cmp(found["new"], found["old"], shallow=False)
        print(f"  leaderboards {'identical' if same else 'DIFFER'}")


def commands(files: dict[str, Path], out: Path) -> dict[str, list[str]]:
    """Every streaming command, with where it writes (``-o``; check prints to stdout)."""
    g, bank = str(files["graded"]), str(files["bank"])
    p = ["-p", RATING]
    return {
        "evaluate qrels": ["evaluate", "qrels", g, "--prompt-class", RATING, "-o", str(out / "rubric.qrels")],
        "evaluate cover": ["evaluate", "cover", g, "--prompt-class", RATING, "--bank", bank, "-q",
                           "-o", str(out / "cover.tsv")],
        "verify grading": ["verify", "grading", g, "--rating-prompt", RATING, "--answer-prompt", ANSWER,
                           "-o", str(out / "grading.tsv")],
        "verify grid": ["verify", "grid", g, *p, "--bank", bank, "-o", str(out / "grid.tsv")],
        "verify uncovered": ["verify", "uncovered", g, *p, "-j", "2", "-t", "4",
                             "-o", str(out / "uncovered.tsv")],
        "verify spurious": ["verify", "spurious", g, *p, "-j", "0", "-t", "4",
                            "-o", str(out / "spurious.tsv")],
        "verify agreement": ["verify", "agreement", g, *p, "-j", "2", "-o", str(out / "agreement.tsv")],
        "verify impact": ["verify", "impact", g, *p, "-a", bank, "-b", str(files["edited"]),
                          "-o", str(out / "impact.tsv")],
        "verify html": ["verify", "html", g, *p, "--bank", bank, "-o", str(out / "review.html")],
        "verify apply": ["verify", "apply", str(files["review"]), g, "-o", str(out / "reviewed.jsonl.gz")],
        "convert check": ["convert", "check", g],
        "grade merge": ["grade", "merge", *(str(f) for f in files["parts"]), "--order", g,
                        "-o", str(out / "merged.jsonl.gz")],
    }  # fmt: skip


def in_child(fn, *args) -> None:
    """Run ``fn(*args)`` in a child process, so that this process stays small.

    A child's peak RSS (``ru_maxrss``) counts the pages it had at ``fork``, that is this
    process's memory at that moment: a parent that had built a big file in memory would show
    its own size as every command's peak.
    """
    from multiprocessing import get_context

    child = get_context("fork").Process(target=fn, args=args)
    child.start()
    child.join()
    if child.exitcode != 0:
        raise SystemExit(f"{fn.__name__} failed")


def run_child(src: Path, args: list[str], stdout: Path) -> tuple[float, float, float]:
    """Run ``python -m rubric ARGS`` with ``src`` on PYTHONPATH; (seconds, peak RSS in MB, CPU
    seconds: user + system, which a shared machine's load inflates much less than seconds)."""
    env = dict(os.environ, PYTHONPATH=str(src), OMP_NUM_THREADS="1")
    start = time.perf_counter()
    with open(stdout, "wb") as out, open(stdout.with_suffix(".err"), "wb") as err:
        child = subprocess.Popen([sys.executable, "-m", "rubric", *args], stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"rubric {' '.join(args)} failed:\n{stdout.with_suffix('.err').read_text()[-2000:]}")
    return seconds, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime  # Linux: KiB


def differing(new: Path, old: Path) -> list[str]:
    """Outputs (files and standard outputs) of the two versions that differ, compared block by
    block (reading them whole would make this process big, see :func:`in_child`); the review
    page is left out: its layout changed (one JSON block per query), its data did not."""
    import filecmp

    names = sorted(f.name for f in new.iterdir() if f.suffix not in (".err", ".html"))
    return [n for n in names if not (old / n).exists() or not filecmp.cmp(new / n, old / n, shallow=False)]


def baseline_src(commit: str, into: Path) -> Path:
    """The ``src`` folder of ``commit`` (``git archive``), to run today's reader path."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", commit, "src"], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into / "src"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[20_000, 200_000])
    ap.add_argument("--items", type=int, default=10)
    ap.add_argument("--per-query", type=int, default=1000)
    ap.add_argument(
        "--baseline", default=BASELINE, help="commit whose CLI is the baseline (default %(default)s)"
    )
    ap.add_argument("--no-baseline", action="store_true", help="time only this checkout")
    ap.add_argument("--only", nargs="*", help="only these commands (e.g. 'verify grid')")
    ap.add_argument("--work", type=Path, help="keep the synthetic files here (reused when present)")
    ap.add_argument(
        "--leaderboard-runs", type=int, default=0, metavar="N",
        help="instead: `evaluate leaderboard` over N synthetic runs x 301 topics x 1000 passages",
    )  # fmt: skip
    args = ap.parse_args()
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} (1, 5, 15 min)")
    with tempfile.TemporaryDirectory(prefix="rubric-scale-") as tmp:
        work = args.work or Path(tmp)
        versions = {"new": ROOT / "src"}
        if not args.no_baseline:
            (Path(tmp) / "baseline").mkdir()
            versions["old"] = baseline_src(args.baseline, Path(tmp) / "baseline")
        if args.leaderboard_runs:
            leaderboard_rows(work, versions, args.leaderboard_runs)
            return
        results: dict[tuple[str, str, int], tuple[float, float]] = {}
        for size in args.sizes:
            folder = work / f"{size}"
            folder.mkdir(parents=True, exist_ok=True)
            if not (folder / "review.json").exists():
                t0 = time.perf_counter()
                in_child(synthesise, folder, size, args.items, args.per_query)
                print(f"synthesised {size} passages in {time.perf_counter() - t0:.0f} s", flush=True)
            elif not shard_paths(folder)[-1].exists():  # files of an older version of this script
                in_child(split_shards, folder / "graded.jsonl.gz", folder)
            names = {"graded": "graded.jsonl.gz", "bank": "bank.jsonl.gz", "edited": "bank-edited.jsonl.gz"}
            files: dict = {k: folder / v for k, v in {**names, "review": "review.json"}.items()}
            files["parts"] = shard_paths(folder)
            mb = files["graded"].stat().st_size / 2**20
            print(f"{size} passages: graded.jsonl.gz {mb:.0f} MB", flush=True)
            outs = {name: folder / f"out-{name}" for name in versions}
            for cmd in commands(files, folder):
                if args.only and cmd not in args.only:
                    continue
                for name, version_src in versions.items():  # new then old, command by command:
                    out = outs[name]  # a shared machine's load drifts less between the two
                    out.mkdir(exist_ok=True)
                    argv = commands(files, out)[cmd]
                    measured = run_child(version_src, argv, out / (cmd.replace(" ", "-") + ".stdout"))
                    results[(cmd, name, size)] = measured
                    seconds, peak, cpu = measured
                    print(f"  {name} {cmd:<17} {seconds:7.2f} s {peak:8.0f} MB {cpu:7.2f} s CPU", flush=True)
            if "old" in versions:
                differ = differing(folder / "out-new", folder / "out-old")
                print(f"  outputs {'identical' if not differ else 'DIFFER: ' + ', '.join(differ)}"
                      " (review.html differs by design: one block per query)")  # fmt: skip
        report(results, args.sizes, list(versions))
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} (1, 5, 15 min)")


def report(results: dict, sizes: list[int], versions: list[str]) -> None:
    """One row per command: seconds and peak RSS per size and version, the ratios the issue asks."""
    small, large = min(sizes), max(sizes)
    head = ["command"]
    for v in versions:
        head += [f"{v} s {s // 1000}k" for s in sizes] + [f"{v} MB {s // 1000}k" for s in sizes]
    if len(sizes) > 1:
        head.append(f"new MB {large // 1000}k/{small // 1000}k")
    if "old" in versions:
        head += [f"new/old s {large // 1000}k", f"new/old CPU s {large // 1000}k"]
    print("\n| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for cmd in dict.fromkeys(c for c, _, _ in results):
        row = [cmd]
        for v in versions:
            row += [f"{results[(cmd, v, s)][0]:.2f}" if (cmd, v, s) in results else "" for s in sizes]
            row += [f"{results[(cmd, v, s)][1]:.0f}" if (cmd, v, s) in results else "" for s in sizes]
        if len(sizes) > 1 and (cmd, "new", large) in results and (cmd, "new", small) in results:
            row.append(f"{results[(cmd, 'new', large)][1] / results[(cmd, 'new', small)][1]:.2f}")
        if "old" in versions and (cmd, "old", large) in results:
            new, old = results[(cmd, "new", large)], results[(cmd, "old", large)]
            row += [f"{new[0] / old[0]:.2f}", f"{new[2] / old[2]:.2f}"]
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
