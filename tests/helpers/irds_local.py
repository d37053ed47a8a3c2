"""Small ir_datasets datasets made of local files and registered for one test, as ir_datasets
allows (``ir_datasets.registry.register`` with ``ir_datasets.create_dataset``): the real package
reads them through its own formats and document store, with no download."""

from __future__ import annotations

import itertools
from pathlib import Path

DOCS = {
    "d1": "Worker bees turn nectar into honey by evaporating its water.",
    "d2": "The sky is blue because air scatters short wavelengths most.",
    "d3": "Tides follow the pull of the Moon.",
    "d4": "Honey keeps for years.",
    "d5": "A text no run retrieves and no one judged.",
}
QUERIES = {"q1": "how do bees make honey", "q2": "why is the sky blue"}
QRELS = [("q1", "d1", 2), ("q1", "d3", 0), ("q2", "d2", 3), ("q2", "d4", 1)]

_names = itertools.count()


def register(folder: Path, *, docs: bool = True, queries: bool = True, qrels: bool = True) -> str:
    """Write the dataset's files under ``folder``, register it under a new id and return the id
    (ids cannot be registered twice in one process)."""
    import ir_datasets

    folder.mkdir(parents=True, exist_ok=True)
    files = {}
    if docs:
        files["docs_tsv"] = folder / "docs.tsv"
        files["docs_tsv"].write_text("".join(f"{d}\t{t}\n" for d, t in DOCS.items()))
    if queries:
        files["queries_tsv"] = folder / "queries.tsv"
        files["queries_tsv"].write_text("".join(f"{q}\t{t}\n" for q, t in QUERIES.items()))
    if qrels:
        files["qrels_trec"] = folder / "qrels.txt"
        files["qrels_trec"].write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in QRELS))
    name = f"rubric-test/local-{next(_names)}-{folder.name}"
    ir_datasets.registry.register(name, ir_datasets.create_dataset(**{k: str(v) for k, v in files.items()}))
    return name
