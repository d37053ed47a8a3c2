"""``NAME=PATH`` arguments: one parser for every option that takes files with a short name.

Run files are often named alike (every first-stage run of a toolkit is ``trec_results_dl20.txt``)
and tagged alike (all of a toolkit's reranked runs are tagged ``rank``), so neither the tag nor the
file name tells them apart; the user names them on the command line instead, as
``--run bm25=a/trec_results_dl20.txt``. A path that exists is always a path, even with ``=`` in it.
"""

from __future__ import annotations

from pathlib import Path


def split_named(arg: str | Path) -> tuple[str | None, str]:
    """``NAME=PATH`` -> ``(NAME, PATH)``; a plain path (or an existing one with ``=`` in it) ->
    ``(None, path)``. A name holds no ``/``, so ``dir/a=b.run`` stays a path."""
    text = str(arg)
    name, sep, path = text.partition("=")
    if sep and name and path and "/" not in name and not Path(text).exists():
        return name, path
    return None, text
