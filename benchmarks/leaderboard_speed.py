"""Leaderboard speed: `rubric evaluate leaderboard` against trec_eval 9.0.8 run once per run file,
and against ranx and ir_measures, measured side by side in one run.

Two rows:

* RAG size: 100 synthetic runs x 301 topics x 1,000 passages (30.1M run lines, the runs of
  ``benchmarks/scale.py --leaderboard-runs``), ``-m ndcg_cut.10 -m map -m P.10 -m recall.1000``;
  made once into ``--rag-dir`` (default ``/tmp/rubric-rag-leaderboard``) if it is not there.
* DL19: the 37 official TREC DL 2019 passage runs and the NIST qrels (``../shared/data``),
  ``-m ndcg_cut.10 -m map -m recip_rank -m P.10``.

trec_eval is the C program of usnistgov/trec_eval at tag v9.0.8 (build it from its source and
pass the binary with ``--trec-eval``; without it the trec_eval column says so), run once per run
file as a campaign script does; it reads plain text only, so gzip runs are first decompressed
into a temporary folder and every tool reads the same plain files. rubric is the CLI as a child
process (``-f trec_eval``, its interpreter start-up counted as trec_eval's starts are), its
worker processes one per core; its peak RSS is the largest of its processes (``os.wait4``).
Every ``all`` value rubric prints must equal trec_eval's (both print ``%.4f``). ranx and
ir_measures run in a separate process on ``--others`` runs spread over a row (their Python
parsing makes all of them too long on a shared machine), reported in seconds per run; their values are
not compared (ranx ranks ties its own way). ranx compiles with numba on first use: that is done
before timing.

The machine may be shared: the ratios are measured in the same run, and the load average is
printed before and after.

    nice python benchmarks/leaderboard_speed.py --trec-eval /tmp/trec_eval-9.0.8/trec_eval
    python benchmarks/leaderboard_speed.py --rows dl19 --others 5
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

DATA = ROOT.parent / "shared" / "data"
RAG_MEASURES = ["ndcg_cut.10", "map", "P.10", "recall.1000"]
DL19_MEASURES = ["ndcg_cut.10", "map", "recip_rank", "P.10"]
RANX = {"ndcg_cut.10": "ndcg@10", "map": "map", "P.10": "precision@10", "recall.1000": "recall@1000",
        "recip_rank": "mrr"}  # fmt: skip


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def plain_copies(files: list[Path], folder: Path) -> list[Path]:
    """The runs as plain text (trec_eval does not read gzip)."""
    out = []
    for f in files:
        target = folder / f.name.removesuffix(".gz")
        with gzip.open(f, "rb") if f.suffix == ".gz" else open(f, "rb") as src, open(target, "wb") as dst:
            shutil.copyfileobj(src, dst)
        out.append(target)
    return out


def parse_trec_eval(text: str) -> dict[tuple[str, str], str]:
    """``{(runid, measure): value}`` of trec_eval's ``all`` lines (``-m runid`` names each run)."""
    values, run = {}, ""
    for line in text.splitlines():
        name, query, value = line.split("\t")
        if name.strip() == "runid":
            run = value
        elif query == "all":
            values[(run, name.strip())] = value
    return values


def children_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def trec_eval_loop(
    binary: Path, qrels: Path, runs: list[Path], measures: list[str]
) -> tuple[float, float, dict]:
    """Seconds, CPU seconds and the values of trec_eval run once per run file."""
    flags = [a for m in ["runid", *measures] for a in ("-m", m)]
    cpu, start = children_cpu(), time.perf_counter()
    text = "".join(subprocess.run([str(binary), *flags, str(qrels), str(r)], check=True, capture_output=True,
                                  text=True).stdout for r in runs)  # fmt: skip
    return time.perf_counter() - start, children_cpu() - cpu, parse_trec_eval(text)


def rubric_cli(qrels: Path, folder: Path, measures: list[str]) -> tuple[float, float, float, dict]:
    """Seconds, CPU seconds (all its processes), peak RSS (MB) of the largest process, and the
    values of the CLI."""
    flags = [a for m in ["runid", *measures] for a in ("-m", m)]
    argv = [sys.executable, "-m", "rubric", "evaluate", "leaderboard", "--qrels", str(qrels),
            "--run", str(folder), *flags, "-f", "trec_eval"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "OMP_NUM_THREADS": "1"}
    with tempfile.TemporaryFile("w+") as out:
        start = time.perf_counter()
        child = subprocess.Popen(argv, stdout=out, stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - start
        if status != 0:
            raise SystemExit(f"rubric failed: {' '.join(argv)}")
        out.seek(0)
        return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, parse_trec_eval(out.read())


def ranx_per_run(qrels: Path, runs: list[Path], measures: list[str]) -> str:
    try:
        from ranx import Qrels, Run, evaluate
    except ImportError:
        return "not installed"
    metrics = [RANX[m] for m in measures]
    judged = Qrels.from_file(str(qrels), kind="trec")
    evaluate(
        judged, Run.from_file(str(runs[0]), kind="trec"), metrics, make_comparable=True
    )  # numba compiles
    start = time.perf_counter()
    for r in runs:
        evaluate(judged, Run.from_file(str(r), kind="trec"), metrics, make_comparable=True)
    return f"{(time.perf_counter() - start) / len(runs):.2f} s/run"


def ir_measures_per_run(qrels: Path, runs: list[Path], measures: list[str]) -> str:
    try:
        import ir_measures
    except ImportError:
        return "not installed"
    names = {
        "ndcg_cut.10": "nDCG@10",
        "map": "AP",
        "P.10": "P@10",
        "recall.1000": "R@1000",
        "recip_rank": "RR",
    }
    wanted = [ir_measures.parse_measure(names[m]) for m in measures]
    judged = list(ir_measures.read_trec_qrels(str(qrels)))
    start = time.perf_counter()
    for r in runs:
        ir_measures.calc_aggregate(wanted, judged, ir_measures.read_trec_run(str(r)))
    return f"{(time.perf_counter() - start) / len(runs):.2f} s/run"


def row(label: str, qrels: Path, runs: list[Path], measures: list[str], args: argparse.Namespace) -> None:
    print(f"{label}: {len(runs)} runs, -m {' -m '.join(measures)}; load {load()}", flush=True)
    seconds, cpu, peak, ours = rubric_cli(qrels, runs[0].parent, measures)
    line = f"  rubric {seconds:.2f} s ({cpu:.2f} s CPU), peak RSS {peak:.0f} MB (largest process)"
    if args.trec_eval is None or not args.trec_eval.exists():
        print(f"{line}; trec_eval: not run (no binary: --trec-eval PATH to a trec_eval 9.0.8 build)")
    else:
        t_loop, cpu_loop, theirs = trec_eval_loop(args.trec_eval, qrels, runs, measures)
        equal = sum(ours.get(k) == v for k, v in theirs.items())
        print(f"{line}\n  trec_eval loop {t_loop:.2f} s ({cpu_loop:.2f} s CPU): "
              f"rubric x{t_loop / seconds:.2f} faster (x{cpu_loop / cpu:.2f} in CPU); "
              f"values equal {equal}/{len(theirs)} (rubric gave {len(ours)})", flush=True)  # fmt: skip
    if args.others:
        some = runs[:: max(1, len(runs) // args.others)][: args.others]  # spread over the row
        import multiprocessing

        # in a fresh process: what they load must not count in a later rubric's peak RSS (a child
        # started from a large process is charged its pages)
        with multiprocessing.get_context("spawn").Pool(1) as pool:
            ranx = pool.apply(ranx_per_run, (qrels, some, measures))
            irm = pool.apply(ir_measures_per_run, (qrels, some, measures))
        per_run = seconds / len(runs)
        print(f"  on {len(some)} runs: ranx {ranx}, ir_measures {irm}; rubric {per_run:.2f} s/run",
              flush=True)  # fmt: skip
    print(f"  load after {load()}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--trec-eval", type=Path, default=None, help="a trec_eval 9.0.8 binary (default: none)"
    )
    parser.add_argument("--rows", default="rag,dl19", help="rows to measure: rag, dl19 (default: both)")
    parser.add_argument(
        "--rag-dir",
        type=Path,
        default=Path("/tmp/rubric-rag-leaderboard"),
        help="where the RAG-size runs are, or are made (default: /tmp/rubric-rag-leaderboard)",
    )
    parser.add_argument("--rag-runs", type=int, default=100, help="runs of the RAG-size row (default: 100)")
    parser.add_argument(
        "--dl19",
        type=Path,
        default=DATA / "naghmefarzi-llmjudge" / "dl19-runs",
        help="the 37 DL19 runs (default: ../shared/data/naghmefarzi-llmjudge/dl19-runs)",
    )
    parser.add_argument(
        "--dl19-qrels",
        type=Path,
        default=DATA / "anserini-tools" / "qrels.dl19-passage.txt",
        help="the DL19 qrels (default: ../shared/data/anserini-tools/qrels.dl19-passage.txt)",
    )
    parser.add_argument(
        "--others",
        type=int,
        default=3,
        help="runs of each row given to ranx and ir_measures (default: 3; 0: skip them)",
    )
    args = parser.parse_args()  # fmt: skip
    # compiled as pip installs it: with PYTHONDONTWRITEBYTECODE set, every start would compile
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "src")], check=True)
    print(f"{os.cpu_count()} cores; load {load()}")
    rows = args.rows.split(",")
    if "rag" in rows:
        if not (args.rag_dir / "qrels.txt").exists():
            from scale import synthesise_runs

            start = time.perf_counter()
            synthesise_runs(args.rag_dir, args.rag_runs)
            print(f"made {args.rag_runs} runs in {args.rag_dir} in {time.perf_counter() - start:.0f} s")
        runs = sorted((args.rag_dir / "runs").iterdir())[: args.rag_runs]
        row("RAG size", args.rag_dir / "qrels.txt", runs, RAG_MEASURES, args)
    if "dl19" in rows:
        if not args.dl19.is_dir():
            print(f"DL19: not run ({args.dl19} is absent)")
            return
        with tempfile.TemporaryDirectory() as tmp:
            runs = plain_copies(sorted(args.dl19.iterdir()), Path(tmp))
            row("DL19", args.dl19_qrels, runs, DL19_MEASURES, args)


if __name__ == "__main__":
    main()
