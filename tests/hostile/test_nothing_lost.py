"""Nothing lost, ever: the faults of the reliability check that lost data, printed a traceback or
went silently wrong, one regression test per class. Every failure is one ``rubric: error:`` line
(exit 2) naming the path and the reason; no input replaced, no output half written, no lock or
temporary file left behind."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from helpers import faults

rubric, assert_one_error = faults.rubric, faults.assert_one_error


def _tables(folder: Path) -> tuple[Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    t, h = folder / "t.tsv", folder / "h.tsv"
    rows = {"A": (0.5, 0.6, 0.4, 0.5), "B": (0.3, 0.2, 0.1, 0.2), "C": (0.2, 0.1, 0.3, 0.2)}
    t.write_text(
        "run\tquery\tndcg\n" + "".join(f"{r}\tq1\t{v[0]}\n{r}\tq2\t{v[2]}\n" for r, v in rows.items())
    )
    h.write_text(
        "run\tquery\tndcg\n" + "".join(f"{r}\tq1\t{v[1]}\n{r}\tq2\t{v[3]}\n" for r, v in rows.items())
    )
    return t, h


META = ["evaluate", "meta", "--resamples", "0"]


# --- evaluate meta: its tables are inputs of the output rule --------------------------------------


def test_meta_output_naming_an_evaluation_is_refused(tmp_path):
    t, h = _tables(tmp_path / "in")
    before = faults.snapshot(tmp_path)
    assert_one_error(rubric(*META, t, "-R", h, "-o", t), f"--output {t}: is also an input")
    assert faults.snapshot(tmp_path) == before


# --- the plot writer: the error path of every file -----------------------------------------------


def test_a_plot_into_a_read_only_folder_fails_before_any_output(tmp_path):
    pytest.importorskip("matplotlib")
    t, h = _tables(tmp_path / "in")
    out = tmp_path / "report.tsv"
    with faults.read_only_folder(tmp_path) as ro:
        r = rubric(*META, t, "-R", h, "-o", out, "--plot", ro / "fig.png")
        assert_one_error(r, f"{ro / 'fig.png'}: cannot write (Read-only file system")
    assert not out.exists()


def test_a_plot_on_a_full_disk_leaves_no_output_and_no_temporary_file(tmp_path):
    pytest.importorskip("matplotlib")
    t, h = _tables(tmp_path / "in")
    with faults.full_disk(tmp_path, "16k") as disk:
        (disk / "filler").write_bytes(b"x" * 12000)
        r = rubric(*META, t, "-R", h, "-o", disk / "report.tsv", "--plot", disk / "fig.png")
        assert_one_error(r, "cannot write (No space left on device)")
        assert sorted(p.name for p in disk.iterdir()) == ["filler"]  # the report is not written either


def test_a_plot_onto_a_folder_is_refused_before_any_work(tmp_path):
    pytest.importorskip("matplotlib")
    t, h = _tables(tmp_path / "in")
    (tmp_path / "fig.png").mkdir()
    r = rubric(*META, t, "-R", h, "-o", tmp_path / "report.tsv", "--plot", tmp_path / "fig.png")
    assert_one_error(r, f"{tmp_path / 'fig.png'}: is a directory")
    assert not (tmp_path / "report.tsv").exists()


def test_two_outputs_are_written_together_or_not_at_all(tmp_path):
    """The second output failing (a folder where its file would go) leaves the first unwritten."""
    t, h = _tables(tmp_path / "in")
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a folder\n")
    r = rubric(*META, t, "-R", h, "-o", tmp_path / "report.tsv", "--per-topic", blocker / "topics.tsv")
    assert_one_error(r, str(blocker / "topics.tsv"), "cannot write")
    assert not (tmp_path / "report.tsv").exists()
    ok = rubric(*META, t, "-R", h, "-o", tmp_path / "report.tsv", "--per-topic", tmp_path / "topics.tsv")
    assert ok.returncode == 0, ok.stderr
    assert (tmp_path / "report.tsv").exists() and (tmp_path / "topics.tsv").exists()


# --- input models: ids and nesting ---------------------------------------------------------------


def _line(qid) -> str:
    return json.dumps([qid, [faults.passage("d1", judgment=1)]]) + "\n"


@pytest.mark.parametrize("qid", [None, ["q1"], {"q": 1}, True, 1.5])
def test_a_query_id_that_is_not_a_string_is_refused_at_its_line(tmp_path, qid):
    p = tmp_path / "p.jsonl"
    p.write_text(_line("q0") + _line(qid))
    r = rubric("evaluate", "qrels", p, "-o", tmp_path / "q.txt")
    assert_one_error(r, f"{p}:2: the query id must be a string")
    assert not (tmp_path / "q.txt").exists()


def test_a_query_id_written_as_a_number_is_its_digits(tmp_path):
    p = tmp_path / "p.jsonl"
    p.write_text(_line(7))
    r = rubric("convert", "check", p)
    assert r.returncode == 0, r.stderr


def test_json_nested_100000_deep_is_one_error_line(tmp_path):
    deep = "[" * 100_000 + "]" * 100_000
    review = tmp_path / "review.json"
    review.write_text(deep)
    passages = tmp_path / "p.jsonl"
    passages.write_text(_line("q1") + deep + "\n")
    graded = faults.graded_fixture.write_graded(tmp_path / "graded.jsonl.gz")
    r = rubric("verify", "apply", review, graded, "-o", tmp_path / "out.jsonl.gz")
    assert_one_error(r, f"{review}: JSON nested too deeply")
    r = rubric("evaluate", "qrels", passages, "-o", tmp_path / "q.txt")
    assert_one_error(r, f"{passages}:2: JSON nested too deeply")


# --- temporary files of killed runs ---------------------------------------------------------------


def test_a_temporary_file_left_by_a_killed_writer_is_removed_by_the_next_write(tmp_path):
    src = faults.valid_inputs(tmp_path / "in")["queries.tsv"]
    out = tmp_path / "q.json"
    gone = 2**22 + 12345  # above the default pid_max: no such process
    stale = tmp_path / f".q.json.rubric-{gone}-abc123.tmp"
    stale.write_text("half a file")
    alive = tmp_path / f".q.json.rubric-{os.getpid()}-def456.tmp"  # a live writer's: kept
    alive.write_text("being written")
    r = rubric("convert", "queries", src, "-o", out)
    assert r.returncode == 0, r.stderr
    assert not stale.exists() and alive.exists()


# --- the lock and the partial of a grading run ---------------------------------------------------

SELF = "QuestionSelfRatedUnanswerablePromptWithChoices"


def _grading_inputs(folder: Path, texts: dict[str, str]) -> tuple[Path, Path]:
    """A passages file with one passage per query (``{query: text}``) and a one-question bank."""
    folder.mkdir(parents=True, exist_ok=True)
    passages = folder / "p.jsonl"
    passages.write_text(
        "".join(json.dumps([q, [faults.passage(f"d-{q}", text)]]) + "\n" for q, text in texts.items())
    )
    bank = folder / "bank.jsonl"
    bank.write_text(
        "".join(
            json.dumps({"query_id": q, "query_text": "bees", "items": [
                {"query_id": q, "question_id": f"{q}/a", "question_text": "What do bees collect?"}]}) + "\n"
            for q in texts
        )
    )  # fmt: skip
    return passages, bank


def _grade(srv, folder: Path, passages: Path, bank: Path, out: Path):
    llm = ["--backend", "openai", "--model", "test-model", "--base-url", srv.url, "--retry-base", "0.01"]
    llm += ["--max-retries", "0", "--cache", folder / "cache.sqlite", "--checkpoint-pairs", "1"]
    return rubric("grade", passages, "--bank", bank, "-p", SELF, *llm, "-o", out)


def test_a_lock_path_that_is_a_folder_is_one_error_line(tmp_path):
    from helpers.openai_server import serve

    passages, bank = _grading_inputs(tmp_path / "in", {"q1": "bees collect nectar"})
    out = tmp_path / "out.jsonl"
    Path(f"{out}.lock").mkdir()
    with serve() as srv:
        r = _grade(srv, tmp_path, passages, bank, out)
    assert_one_error(r, f"{out}.lock: is a directory")
    assert not out.exists() and Path(f"{out}.lock").is_dir()


def test_a_lock_on_a_full_disk_is_one_error_line_and_leaves_no_lock(tmp_path):
    from helpers.openai_server import serve

    passages, bank = _grading_inputs(tmp_path / "in", {"q1": "bees collect nectar"})
    with faults.full_disk(tmp_path, "16k") as disk, serve() as srv:
        fd = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(fd, b"x" * 1024):
                pass
        except OSError:
            pass  # the disk is full
        finally:
            os.close(fd)
        r = _grade(srv, tmp_path, passages, bank, disk / "out.jsonl")
        assert_one_error(r, "out.jsonl.lock: cannot write (No space left on device)")
        assert sorted(p.name for p in disk.iterdir()) == ["filler"]


def test_an_input_edited_in_place_with_the_same_size_and_time_is_not_resumed(tmp_path):
    """A run with a failed pair keeps its partial; the passages file is then edited without a
    trace in size or modification time: the rerun must grade the new text, not resume the old."""
    from helpers.openai_server import Fault, serve

    passages, bank = _grading_inputs(tmp_path / "in", {"q1": "bees collect nectar", "q2": "[fail] ants"})
    out = tmp_path / "out.jsonl"
    with serve(faults={"[fail]": Fault(500)}) as srv:
        first = _grade(srv, tmp_path, passages, bank, out)
        assert first.returncode == 1, first.stderr
        assert Path(f"{out}.partial").exists()
        st = passages.stat()
        passages.write_text(passages.read_text().replace("bees collect nectar", "wasps collect nectar"[:19]))
        os.utime(passages, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert passages.stat().st_size == st.st_size and passages.stat().st_mtime_ns == st.st_mtime_ns
        again = _grade(srv, tmp_path, passages, bank, out)
    assert again.returncode == 1, again.stderr  # q2 still fails
    assert "edited since" in again.stderr.decode()
    q1 = json.loads(out.read_text().splitlines()[0])
    assert q1[1][0]["text"] == "wasps collect nectar"[:19]


# --- the smaller items: each a rule with its test -------------------------------------------------


def _review(path: Path, graded: Path, reviewer: str = "alice", note: str | None = None) -> Path:
    from helpers import graded_fixture as fx
    from rubric.verify.review import file_sha256

    action = {"type": "grade", "query_id": "q1", "paragraph_id": "p2", "item_id": fx.iid("q1", "a")}
    action |= {"prompt_class": fx.RATING, "llm": fx.LLM, "grade": 4} | ({"note": note} if note else {})
    source = {"file": graded.name, "sha256": file_sha256(graded)}
    path.write_text(json.dumps({"version": 1, "reviewer": reviewer, "source": source, "actions": [action]}))
    return path


def _scattered_graded(tmp_path: Path) -> Path:
    """The graded fixture with query q1 on lines 1 and 3 (q2 between): one query, as the docs say."""
    import gzip

    whole = faults.graded_fixture.write_graded(tmp_path / "g.jsonl.gz")
    lines = [json.loads(x) for x in gzip.decompress(whole.read_bytes()).decode().splitlines()]
    (q1, passages), rest = lines[0], lines[1:]
    split = [[q1, passages[:1]], *rest, [q1, passages[1:]]]
    path = tmp_path / "scattered.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in split))
    return path


def test_verify_apply_merges_a_query_on_non_adjacent_lines(tmp_path):
    graded = _scattered_graded(tmp_path)
    review = _review(tmp_path / "alice.json", graded)
    r = rubric("verify", "apply", review, graded, "-o", tmp_path / "out.jsonl")
    assert r.returncode == 0, r.stderr
    out = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [(q, len(ps)) for q, ps in out] == [("q1", 6), ("q2", 3)]


def test_verify_apply_reads_the_graded_file_from_a_pipe(tmp_path):
    graded = _scattered_graded(tmp_path)
    review = _review(tmp_path / "alice.json", graded)
    r = rubric("verify", "apply", review, "-", "-o", tmp_path / "piped.jsonl", input=graded.read_bytes())
    assert r.returncode == 0, r.stderr
    assert rubric("verify", "apply", review, graded, "-o", tmp_path / "file.jsonl").returncode == 0
    assert (tmp_path / "piped.jsonl").read_bytes() == (tmp_path / "file.jsonl").read_bytes()


def test_a_reviewer_name_with_control_characters_is_refused(tmp_path):
    graded = faults.graded_fixture.write_graded(tmp_path / "g.jsonl.gz")
    for name in ("al\tice", "al\nice", "\x1b[31malice"):
        review = _review(tmp_path / "bad.json", graded, reviewer=name)
        r = rubric("verify", "apply", review, graded, "-o", tmp_path / "out.jsonl")
        line = assert_one_error(r, "reviewer", "control characters")
        assert "\x1b" not in line
    assert not (tmp_path / "out.jsonl").exists()


def test_a_note_with_control_characters_never_reaches_the_terminal_raw(tmp_path):
    graded = faults.graded_fixture.write_graded(tmp_path / "g.jsonl.gz")
    review = _review(tmp_path / "alice.json", graded, note="red\x1b[31m\ttab\nline\rback")
    r = rubric("verify", "apply", review, graded, "-o", tmp_path / "out.jsonl")
    assert r.returncode == 0, r.stderr
    stderr = r.stderr.decode()
    assert "\x1b" not in stderr and "\r" not in stderr
    assert "red\\x1b[31m\\ttab\\nline\\rback" in stderr


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-Infinity"])
def test_evaluate_meta_refuses_scores_that_are_not_finite(tmp_path, value):
    t, h = _tables(tmp_path)
    t.write_text(t.read_text().replace("0.5", value, 1))
    assert_one_error(rubric(*META, t, "-R", h), f"{t}:2: expected a finite number")


def test_evaluate_meta_refuses_nan_ranks(tmp_path):
    t, _ = _tables(tmp_path)
    ranks = tmp_path / "ranks.json"
    ranks.write_text('{"A": 1, "B": NaN, "C": 3}')
    assert_one_error(rubric(*META, t, "-R", ranks), f"{ranks}: expected", "found nan for B")


@pytest.mark.parametrize(
    "args",
    [
        ["bank", "show", "{empty}"],
        [
            "bank",
            "split",
            "{empty}",
            "--secret",
            "0.3",
            "--seed",
            "1",
            "--public-out",
            "{out}",
            "--secret-out",
            "{out2}",
        ],
        ["evaluate", "cover", "{graded}", "--bank", "{empty}", "-o", "{out}"],
        ["convert", "queries", "{empty}", "-o", "{out}"],
    ],
    ids=["bank show", "bank split", "evaluate cover", "convert queries"],
)
def test_an_empty_bank_or_queries_file_is_an_error_not_an_empty_output(tmp_path, args):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    files = {"empty": empty, "out": tmp_path / "o.jsonl", "out2": tmp_path / "o2.jsonl"}
    files["graded"] = faults.graded_fixture.write_graded(tmp_path / "g.jsonl.gz")
    r = rubric(*[a.format(**files) for a in args])
    assert_one_error(r, str(empty))
    assert not files["out"].exists() and not files["out2"].exists()
