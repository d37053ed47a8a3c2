"""The measure registry: trec_eval and ir_measures-style names onto trec_eval requests.

Users know measures by two spellings: trec_eval's (``ndcg_cut.10``, ``P.5,10``, ``map``,
``recip_rank``, ``Rprec_mult.0.5``, ``utility.2,-1,0,0``, nicknames ``official`` / ``all_trec``)
and ir_measures' (``nDCG@10``, ``P(rel=2)@20``, ``AP(rel=2)``, ``RR``, ``R@1000``). Both are
parsed here into :class:`Measure` objects: the request string handed to trec_eval (through
pytrec_eval), the output key it produces, the name trec_eval prints, and a per-measure
relevance level (``rel=``) that overrides ``-l``. One module owns every name, so the CLI, the
leaderboard, the correlation sweep and the significance tests accept exactly the same ones.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from functools import cache

from rubric.errors import UserError

#: Measures whose value is a count: trec_eval sums them over queries and prints integers.
COUNT_MEASURES = frozenset({"num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"})
#: Not numbers (trec_eval prints the run tag and a string of relevance digits).
STRING_MEASURES = frozenset({"runid", "relstring"})

#: The order trec_eval 9.0.8 prints its measures in (``-m all_trec``).
TREC_EVAL_ORDER = (
    "runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall P relstring "
    "recall infAP gm_bpref Rprec_mult utility 11pt_avg binG G ndcg ndcg_rel Rndcg ndcg_cut map_cut "
    "relative_P success set_P set_relative_P set_recall set_map set_F num_nonrel_judged_ret"
).split()

#: trec_eval measures that ignore the relevance level (``-l``): they use the raw grades.
GRADED_MEASURES = ("ndcg", "ndcg_cut", "ndcg_rel", "Rndcg", "G", "binG", "utility")


@dataclass(frozen=True)
class Measure:
    """One number per query and run.

    ``request`` is what trec_eval is asked for (``P.20``), ``key`` what pytrec_eval returns
    (``P_20``), ``name`` how we and trec_eval print it (``P_20``; ``utility_2,-1,0,0`` where
    pytrec_eval drops the parameters from the key), ``label`` the spelling the user gave
    (``P(rel=2)@20``), ``level`` a relevance level of its own (``rel=2``) or None for ``-l``.
    """

    name: str
    request: str
    key: str
    label: str
    level: int | None = None
    alpha: float | None = None  # alpha-nDCG (computed here, over per-item qrels), else None
    cutoff: int = 0

    @property
    def needs_items(self) -> bool:
        """Computed by :mod:`rubric.evaluate.alpha_ndcg` over per-item qrels, not by trec_eval."""
        return self.alpha is not None

    @property
    def aggregate(self) -> str:
        """How trec_eval combines the queries: ``sum``, ``gmean`` or ``mean``."""
        if self.key in COUNT_MEASURES:
            return "sum"
        if self.key.startswith("gm_"):
            return "gmean"
        return "mean"

    @property
    def is_count(self) -> bool:
        return self.key in COUNT_MEASURES


# --- trec_eval names ---------------------------------------------------------------------------


def _supported() -> tuple[frozenset[str], dict[str, set[str]]]:
    import pytrec_eval

    return frozenset(pytrec_eval.supported_measures), dict(pytrec_eval.supported_nicknames)


@cache
def _probe_keys(request: str) -> tuple[str, ...]:
    """The output keys trec_eval produces for one request (asked on a one-document toy)."""
    from pytrec_eval import _RelevanceEvaluator

    try:
        evaluator = _RelevanceEvaluator(
            query_relevance={"q": {"d": 1}},
            measures={request},
            relevance_level=1,
            judged_docs_only_flag=False,
        )
        return tuple(evaluator.evaluate({"q": {"d": 1.0}})["q"])
    except Exception:  # trec_eval rejects the parameters
        return ()


def _trec_eval_measures(text: str, label: str, level: int | None) -> list[Measure]:
    supported, nicknames = _supported()
    if text in nicknames:
        out: list[Measure] = []
        order = {name: i for i, name in enumerate(TREC_EVAL_ORDER)}
        for base in sorted(nicknames[text], key=lambda b: (order.get(b, len(order)), b)):
            if base not in STRING_MEASURES:
                out.extend(_trec_eval_measures(base, base, level))
        return out
    base, _, params = text.partition(".")
    if base not in supported:
        return []
    if base in STRING_MEASURES:
        raise UserError(f"-m: {text} is not a number (trec_eval prints a string for it)")
    keys = _probe_keys(text)
    if not keys:
        raise UserError(f"-m: trec_eval rejects the parameters of {text!r}")
    measures = []
    for key in keys:
        name = f"{base}_{params}" if params and key == base else key
        measures.append(
            Measure(name=name, request=text, key=key, label=label if len(keys) == 1 else name, level=level)
        )
    return measures


# --- ir_measures names -------------------------------------------------------------------------

_IR_MEASURES = re.compile(r"^(?P<name>[A-Za-z_]+)(?:\((?P<args>[^)]*)\))?(?:@(?P<cutoff>[0-9.]+))?$")

#: ir_measures name -> (trec_eval base without cutoff, trec_eval base with a cutoff, takes rel=)
IR_NAMES: dict[str, tuple[str | None, str | None, bool]] = {
    "nDCG": ("ndcg", "ndcg_cut", False),
    "P": (None, "P", True),
    "R": (None, "recall", True),
    "AP": ("map", "map_cut", True),
    "RR": ("recip_rank", None, True),
    "Rprec": ("Rprec", None, True),
    "Bpref": ("bpref", None, True),
    "infAP": ("infAP", None, True),
    "Success": (None, "success", True),
    "IPrec": (None, "iprec_at_recall", True),
    "NumRet": ("num_ret", None, False),
    "NumRel": ("num_rel", None, True),
    "NumRelRet": ("num_rel_ret", None, True),
    "NumQ": ("num_q", None, False),
    "SetP": ("set_P", None, True),
    "SetR": ("set_recall", None, True),
    "SetF": ("set_F", None, True),
    "SetAP": ("set_map", None, True),
}


def _alpha_ndcg(text: str, args: str | None, cutoff: str | None) -> list[Measure]:
    alpha, level = 0.5, None
    for arg in filter(None, (a.strip() for a in (args or "").split(","))):
        key, _, value = (x.strip() for x in arg.partition("="))
        try:
            if key == "alpha" and 0 <= float(value) <= 1:
                alpha = float(value)
                continue
            if key == "rel":
                level = int(value)
                continue
        except ValueError:
            pass
        raise UserError(f"-m: {text}: parameters are alpha=A (0..1) and rel=N, got {arg!r}")
    if cutoff is None or not cutoff.isdigit() or int(cutoff) < 1:
        raise UserError(f"-m: {text} needs an integer cutoff, e.g. alpha_nDCG@10")
    name = f"alpha_ndcg_cut_{cutoff}"
    return [Measure(name, "alpha_nDCG", name, text, level, alpha=alpha, cutoff=int(cutoff))]


def _ir_measures(text: str) -> list[Measure] | None:
    m = _IR_MEASURES.match(text)
    if m and m["name"] == "alpha_nDCG":
        return _alpha_ndcg(text, m["args"], m["cutoff"])
    if not m or m["name"] not in IR_NAMES:
        return None
    plain, cut_base, takes_rel = IR_NAMES[m["name"]]
    level = None
    for arg in filter(None, (a.strip() for a in (m["args"] or "").split(","))):
        key, _, value = arg.partition("=")
        if key.strip() != "rel" or not value.strip().lstrip("-").isdigit():
            raise UserError(f"-m: {text}: the only parameter is rel=N (an integer), got {arg!r}")
        if not takes_rel:
            raise UserError(
                f"-m: {text}: {m['name']} uses the graded relevance values and takes no rel= "
                "(as in trec_eval, where -l does not change nDCG)"
            )
        level = int(value)
    cutoff = m["cutoff"]
    if cutoff is None and plain is None:
        raise UserError(f"-m: {text} needs a cutoff, e.g. {m['name']}@10")
    if cutoff is not None and cut_base is None:
        raise UserError(f"-m: {text}: trec_eval has no cutoff for {m['name']}; use {m['name']}")
    request = plain if cutoff is None else f"{cut_base}.{cutoff}"
    found = _trec_eval_measures(request, text, level)
    return [Measure(x.name, x.request, x.key, text, level) for x in found] if len(found) == 1 else found


# --- public ------------------------------------------------------------------------------------


def known_names() -> list[str]:
    supported, nicknames = _supported()
    ir_names = [f"{n}@10" if plain is None else n for n, (plain, _, _) in IR_NAMES.items()] + [
        "alpha_nDCG@10"
    ]
    return sorted(supported | set(nicknames)) + ir_names


def parse_measure(text: str) -> list[Measure]:
    """Measures named by one ``-m`` value (several for ``P.5,10`` or ``official``)."""
    text = text.strip()
    found = _ir_measures(text)
    if found is None:
        found = _trec_eval_measures(text, text, None)
    if not found:
        close = difflib.get_close_matches(text, known_names(), n=5, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise UserError(
            f"-m: unknown measure {text!r}{hint} (trec_eval names like ndcg_cut.10, P.20, map, "
            "recip_rank, or ir_measures names like nDCG@10, P(rel=2)@20, AP(rel=2), RR)"
        )
    return found


def parse_measures(texts: list[str]) -> list[Measure]:
    """All measures of several ``-m`` values, first occurrence kept, in the order given."""
    seen: dict[tuple[str, int | None], Measure] = {}
    for text in texts:
        for part in _split_list(text):
            if part == "runid":  # a line trec_eval prints, not a number: see wants_runid()
                continue
            for m in parse_measure(part):
                seen.setdefault((m.name, m.level), m)
    if not seen:
        raise UserError("-m: give at least one measure")
    return list(seen.values())


def wants_runid(texts: list[str]) -> bool:
    """Whether trec_eval would print the ``runid`` line for these ``-m`` values."""
    _, nicknames = _supported()
    parts = [p for t in texts for p in _split_list(t)]
    return any(p == "runid" or "runid" in nicknames.get(p, ()) for p in parts)


def _split_list(text: str) -> list[str]:
    """``-m "map nDCG@10"`` names two measures; commas stay (they separate trec_eval parameters)."""
    return [t for t in text.split() if t]
