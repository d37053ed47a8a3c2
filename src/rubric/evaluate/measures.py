"""The measure registry: every name an IR researcher types, onto trec_eval or onto our own code.

Users know measures by three spellings, and all of them are accepted here:

* trec_eval's requests: ``ndcg_cut.10``, ``P.5,10``, ``map``, ``recip_rank``,
  ``Rprec_mult.0.5``, ``utility.2,-1,0,0``, nicknames ``official``, ``all_trec``, ``set``;
* trec_eval's output names, as ``-m official`` prints them: ``P_10``, ``ndcg_cut_10``,
  ``iprec_at_recall_0.00``, ``map_cut_100``;
* ir_measures' names, parsed by ir_measures itself: ``nDCG@10``, ``P(rel=2)@20``, ``AP(rel=2)``,
  ``RR(rel=2)@10`` (MS MARCO's MRR@10), ``MRR@10``, ``Judged@10``, ``ERR@10``, ``SetF(beta=0.5)``,
  ``nDCG(judged_only=True)@10``, ``alpha_nDCG(alpha=0.5)@10``.

Matching is exact first, then case-insensitive (``ndcg@10`` and ``NDCG@10`` are ``nDCG@10``); an
unknown name gets the closest known names as a suggestion. One ``-m`` value may hold several
names separated by commas or blanks (``-m "nDCG@10,P@5"``); the commas of trec_eval's parameter
lists stay with their measure (``P.5,10``).

Whatever trec_eval computes stays exact to trec_eval 9.0.8: the measures campaigns use at scale
by :mod:`rubric.evaluate.columnar` (tested value for value against trec_eval's own code), the
others by trec_eval itself through pytrec_eval; ir_measures names map onto trec_eval requests
as ir_measures' own pytrec_eval provider maps them. What trec_eval lacks is computed here on
trec_eval's ranking (:mod:`rubric.evaluate.ranked_measures`: RR with a cutoff, Judged, ERR;
:mod:`rubric.evaluate.alpha_ndcg`).

Every name and parameter is checked here, before any file is read: trec_eval aborts the whole
process on a parameter it cannot read (``P.abc``) and silently scores 0 on others
(``utility.x``), so nothing reaches it unchecked.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from rubric.errors import UserError, expected

if TYPE_CHECKING:  # ir_measures loads only when an ir_measures name is parsed
    from ir_measures.measures.base import Measure as IrMeasure

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

#: Measures computed in this package rather than by trec_eval (``Measure.request`` names them).
OWN_MEASURES = frozenset({"RR", "Judged", "ERR", "alpha_nDCG"})


@dataclass(frozen=True)
class Measure:
    """One number per query and run.

    ``request`` is what trec_eval is asked for (``P.20``; for measures computed here the
    family: ``RR``, ``Judged``, ``ERR``, ``alpha_nDCG``), ``key`` what pytrec_eval returns
    (``P_20``), ``name`` how we and trec_eval print it (``P_20``; ``utility_2,-1,0,0`` where
    pytrec_eval drops the parameters from the key; ``RR(rel=2)@10`` for ours), ``label`` the
    spelling the user gave (``P(rel=2)@20``), ``level`` a relevance level of its own (``rel=2``)
    or None for ``-l``. ``judged_only`` is a per-measure ``-J`` (None: the command's), ``gains``
    ir_measures' ``gains=`` (grade -> gain, applied to the qrels before trec_eval).
    """

    name: str
    request: str
    key: str
    label: str
    level: int | None = None
    alpha: float | None = None  # alpha-nDCG only
    cutoff: int = 0  # measures computed here; 0 = the whole ranking
    judged_only: bool | None = None
    gains: tuple[tuple[int, int], ...] | None = None

    @property
    def needs_items(self) -> bool:
        """Computed by :mod:`rubric.evaluate.alpha_ndcg` over per-item qrels, not by trec_eval."""
        return self.request == "alpha_nDCG"

    @property
    def by_trec_eval(self) -> bool:
        return self.request not in OWN_MEASURES

    @property
    def uses_level(self) -> bool:
        """Whether a relevance level (``-l``, ``rel=``) changes it; graded measures use the grades."""
        return self.request.partition(".")[0] not in (*GRADED_MEASURES, "ERR", "Judged")

    @property
    def aggregate(self) -> str:
        """How trec_eval combines the queries: ``sum``, ``gmean`` or ``mean``."""
        if not self.by_trec_eval:
            return "mean"
        if self.key in COUNT_MEASURES:
            return "sum"
        if self.key.startswith("gm_"):
            return "gmean"
        return "mean"

    @property
    def is_count(self) -> bool:
        return self.by_trec_eval and self.key in COUNT_MEASURES

    @property
    def identity(self) -> tuple:
        """What makes two measures the same number (``nDCG@10`` is ``ndcg_cut.10``)."""
        return (self.name, self.level, self.judged_only, self.gains, self.alpha)


# --- trec_eval names ---------------------------------------------------------------------------


def _supported() -> tuple[frozenset[str], dict[str, set[str]]]:
    import pytrec_eval

    return frozenset(pytrec_eval.supported_measures), dict(pytrec_eval.supported_nicknames)


_INT = r"[0-9]+"
_FLOAT = r"-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)"

#: How each trec_eval 9.0.8 measure reads its parameters (meas_init.c), with an example; the
#: others take none. Checked here because trec_eval aborts on what it cannot read.
_PARAMS: dict[str, tuple[str, str]] = {
    **{m: ("cutoffs", f"{m}.10 or {m}.5,10") for m in ("P", "recall", "relative_P", "success")},
    **{m: ("cutoffs", f"{m}.10 or {m}.10,100") for m in ("map_cut", "ndcg_cut")},
    "iprec_at_recall": ("recall levels", "iprec_at_recall.0.1,0.5"),
    "Rprec_mult": ("multiples", "Rprec_mult.0.5,2.0"),
    "11pt_avg": ("recall levels", "11pt_avg.0.2,0.5,0.8"),
    "set_F": ("beta", "set_F.0.5"),
    "utility": ("coefficients", "utility.1,-1,0,0"),
    **{m: ("gains", f"{m}.1=1,2=3") for m in ("ndcg", "ndcg_rel", "Rndcg", "G")},
}


def _check_params(base: str, params: str, text: str) -> None:
    """Refuse parameters trec_eval would abort on or silently misread (exit 2 naming ``-m``)."""
    kind, example = _PARAMS.get(base, ("", ""))
    if not kind:
        raise UserError(f"{{measures}}: {text}: {base} takes no parameters; write {base}", "measures")
    values = params.split(",")
    if kind == "cutoffs":  # trec_eval reads them with atol: 23.4 is 23 (its own test suite has it)
        ok = all(re.fullmatch(r"[0-9]+(\.[0-9]*)?", v) and int(v.partition(".")[0]) > 0 for v in values)
        values = [v.partition(".")[0] for v in values] if ok else values
        what = "positive integer cutoffs"
    elif kind == "gains":
        ok = all(re.fullmatch(rf"{_INT}={_FLOAT}", v) for v in values)
        what = "grade=gain pairs"
    else:
        ok = all(re.fullmatch(_FLOAT, v) for v in values)
        if ok and kind == "recall levels":
            ok = all(0 <= float(v) <= 1 for v in values)
        elif ok and kind == "multiples":
            ok = all(float(v) > 0 for v in values)
        elif ok and kind == "beta":
            ok = len(values) == 1 and float(values[0]) > 0
        elif ok and kind == "coefficients":
            ok = len(values) == 4
        what = {
            "recall levels": "recall levels between 0 and 1",
            "multiples": "positive multiples of R",
            "beta": "one positive beta",
            "coefficients": "4 numbers a,b,c,d (gain per relevant retrieved, nonrelevant retrieved, "
            "relevant missed, nonrelevant missed)",
        }[kind]
    if ok and kind in ("cutoffs", "recall levels", "multiples"):
        ok = len({float(v) for v in values}) == len(values)
        what += " without repeats"
    if not ok:
        raise UserError(f"{{measures}}: {text}: {base} takes {what}, e.g. {example}", "measures")


@cache
def _probe_keys(request: str) -> tuple[str, ...]:
    """The output keys trec_eval produces for one (checked) request, asked on a one-document toy."""
    from pytrec_eval import _RelevanceEvaluator

    evaluator = _RelevanceEvaluator(
        query_relevance={"q": {"d": 1}},
        measures={request},
        relevance_level=1,
        judged_docs_only_flag=False,
    )
    return tuple(evaluator.evaluate({"q": {"d": 1.0}})["q"])


_PARAM_TEXT = re.compile(r"^[0-9.,=\-]+$")


def trec_eval_request(text: str, *, ignore_case: bool = False) -> tuple[str, str] | None:
    """The trec_eval request ``text`` names and ``text`` spelled in trec_eval's case, or None.

    ``P.5,10`` asks for itself; an output name asks for the request behind it (``P_10`` ->
    ``P.10``, ``ndcg_cut_10`` -> ``ndcg_cut.10``); ``ignore_case``: ``MAP`` is ``map``.
    """
    if "@" in text or "(" in text:
        return None
    supported, nicknames = _supported()
    same = (lambda a, b: a.casefold() == b.casefold()) if ignore_case else str.__eq__
    base, dot, params = text.partition(".")
    found = next((n for n in sorted(supported | set(nicknames)) if same(n, base)), None)
    if found is not None:
        return found + dot + params, found + dot + params
    # trec_eval's output names: base_params, the longest base that fits (map_cut_100, not map)
    for b in sorted(_PARAMS, key=len, reverse=True):
        head, sep, rest = text[: len(b)], text[len(b) : len(b) + 1], text[len(b) + 1 :]
        if sep == "_" and same(head, b) and _PARAM_TEXT.match(rest):
            return f"{b}.{rest}", f"{b}_{rest}"
    return None


def _trec_eval_measures(request: str, label: str, level: int | None) -> list[Measure]:
    supported, nicknames = _supported()
    if request in nicknames:
        out: list[Measure] = []
        order = {name: i for i, name in enumerate(TREC_EVAL_ORDER)}
        for base in sorted(nicknames[request], key=lambda b: (order.get(b, len(order)), b)):
            if base in supported and base not in STRING_MEASURES:
                out.extend(_trec_eval_measures(base, base, level))
        return out
    base, _, params = request.partition(".")
    if base in STRING_MEASURES:
        raise UserError(
            f"{{measures}}: {label} is not a number (trec_eval prints a string for it)", "measures"
        )
    if params:
        _check_params(base, params, label)
    keys = _probe_keys(request)
    measures = []
    for key in keys:
        name = f"{base}_{params}" if params and key == base else key
        measures.append(
            Measure(name=name, request=request, key=key, label=label if len(keys) == 1 else name, level=level)
        )
    return measures


# --- ir_measures names -------------------------------------------------------------------------

#: ir_measures measure -> trec_eval request without a cutoff, and the base taking the cutoff
#: (as ir_measures' pytrec_eval provider maps them). None: trec_eval has no such variant.
_TREC_EVAL_OF: dict[str, tuple[str | None, str | None]] = {
    "P": (None, "P"),
    "R": (None, "recall"),
    "AP": ("map", "map_cut"),
    "nDCG": ("ndcg", "ndcg_cut"),
    "RR": ("recip_rank", None),
    "Rprec": ("Rprec", None),
    "Bpref": ("bpref", None),
    "infAP": ("infAP", None),
    "Success": (None, "success"),
    "NumQ": ("num_q", None),
    "NumRel": ("num_rel", None),
    "NumRet": ("num_ret", None),
    "SetAP": ("set_map", None),
    "SetF": ("set_F", None),
    "SetP": ("set_P", None),
    "SetR": ("set_recall", None),
    "IPrec": ("iprec_at_recall", None),
}

_NAME_PART = re.compile(r"^[^\s(@]+")


@cache
def _ir_registry() -> dict[str, IrMeasure]:
    import ir_measures

    return dict(ir_measures.measures.registry)


def _ir_name(text: str, *, ignore_case: bool) -> str | None:
    """The ir_measures registry name ``text`` starts with, in ir_measures' case (or None);
    ignoring case, the measure's own name wins over an alias (``ndcg`` -> ``nDCG``, not ``NDCG``)."""
    m = _NAME_PART.match(text)
    if not m:
        return None
    registry = _ir_registry()
    if m.group(0) in registry or not ignore_case:
        return m.group(0) if m.group(0) in registry else None
    same = [k for k in registry if k.casefold() == m.group(0).casefold()]
    return min(same, key=lambda k: k != registry[k].NAME) if same else None


def _computed_here(ir_name: str) -> bool:
    return ir_name in _TREC_EVAL_OF or ir_name in OWN_MEASURES


def _parse_ir(text: str, name: str) -> tuple[IrMeasure, dict[str, object]]:
    """ir_measures' typed measure for ``text`` and the parameters the user gave (not an alias's)."""
    import ir_measures

    spelled = name + text[len(name) :]
    try:
        measure = ir_measures.parse_measure(spelled)
    except (ValueError, SyntaxError):
        cutoff = text.partition("@")[2]
        if cutoff and not re.fullmatch(r"[0-9]+(\.[0-9]+)?", cutoff):
            raise UserError(
                f"{{measures}}: {text}: the cutoff after @ must be a positive integer, e.g. {name}@10",
                "measures",
            ) from None
        raise UserError(
            f"{{measures}}: {text}: cannot read it as an ir_measures name; "
            f"write {name}(param=value,...)@cutoff, e.g. {name}(rel=2)@10",
            "measures",
        ) from None
    if not _computed_here(measure.NAME):
        raise UserError(
            f"{{measures}}: {text}: ir_measures computes {measure.NAME} with another tool "
            "(cwl_eval, pyndeval, gdeval); here: trec_eval's measures and "
            "RR@k, Judged@k, ERR@k, alpha_nDCG@k",
            "measures",
        )
    preset = dict(_ir_registry()[name].params)  # MRR, SetRelP, NumRelRet: aliases with parameters
    given = {k: v for k, v in measure.params.items() if k not in preset or preset[k] != v}
    supported = measure.SUPPORTED_PARAMS
    unknown = [k for k in measure.params if k not in supported]
    if unknown:
        hint = ""
        if "rel" in unknown and measure.NAME in ("nDCG", "ERR"):
            hint = (
                f" ({measure.NAME} uses the graded labels as gains; -l and rel= do not change it, "
                "as in trec_eval)"
            )
        raise UserError(
            f"{{measures}}: {text}: {measure.NAME} takes {_takes(measure)}; got {', '.join(unknown)}{hint}",
            "measures",
        )
    for key, info in supported.items():
        if info.required and key not in measure.params:
            example = f"{measure.NAME}@10" if key == "cutoff" else f"{measure.NAME}({key}=...)"
            raise UserError(f"{{measures}}: {text}: {measure.NAME} needs a {key}, e.g. {example}", "measures")
    try:
        measure.validate_params()
    except (AssertionError, ValueError, TypeError) as e:
        raise UserError(
            f"{{measures}}: {text}: {e} ({measure.NAME} takes {_takes(measure)})", "measures"
        ) from None
    cutoff = measure.params.get("cutoff")
    if cutoff is not None and (not isinstance(cutoff, int) or isinstance(cutoff, bool) or cutoff < 1):
        raise UserError(
            f"{{measures}}: {text}: the cutoff must be a positive integer, e.g. {measure.NAME}@10", "measures"
        )
    return measure, given


def _takes(measure: IrMeasure) -> str:
    return ", ".join("@cutoff" if k == "cutoff" else f"{k}=" for k in measure.SUPPORTED_PARAMS) or "nothing"


def _from_ir(text: str, label: str, measure: IrMeasure, given: dict[str, object]) -> list[Measure]:
    """Our measures for one typed ir_measures measure: trec_eval's where it has one, else ours."""
    name, params = measure.NAME, measure.params
    level = given.get("rel")
    judged_only = params.get("judged_only")
    cutoff = params.get("cutoff")
    if name in ("RR", "Judged", "ERR", "alpha_nDCG") and (name != "RR" or cutoff is not None):
        if name == "alpha_nDCG":
            return [_alpha_ndcg(text, label, measure, given)]
        own = str(measure)
        return [Measure(own, name, own, label, level, cutoff=cutoff or 0, judged_only=judged_only)]
    plain, with_cutoff = _TREC_EVAL_OF[name]
    if name == "nDCG" and params.get("dcg", "log2") != "log2":
        raise UserError(
            f"{{measures}}: {text}: only trec_eval's nDCG (dcg='log2') is computed here", "measures"
        )
    if name == "IPrec":
        request = f"iprec_at_recall.{params['recall']}"
    elif name == "SetF" and "beta" in params:
        request = f"set_F.{params['beta']}"
    elif name == "SetP" and params.get("relative"):
        request = "set_relative_P"
    elif name == "NumRet" and "rel" in params:  # NumRelRet = NumRet(rel=1): relevant retrieved
        request = "num_rel_ret"
    elif cutoff is None:
        assert plain is not None  # a required cutoff was checked by _parse_ir
        request = plain
    elif with_cutoff is None:
        raise UserError(f"{{measures}}: {text}: {name} has no cutoff; use {name}", "measures")
    else:
        request = f"{with_cutoff}.{cutoff}"
    gains = params.get("gains")
    if gains and not all(_is_int(g) and _is_int(v) for g, v in gains.items()):
        raise UserError(
            f"{{measures}}: {text}: gains map integer grades to integer gains, e.g. gains={{1:1,2:3}}",
            "measures",
        )
    gain_pairs = tuple(sorted(gains.items())) if gains else None
    found = _trec_eval_measures(request, label, level)
    return [
        Measure(m.name, m.request, m.key, label if len(found) == 1 else m.label, level,
                judged_only=judged_only, gains=gain_pairs)
        for m in found
    ]  # fmt: skip


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _alpha_ndcg(text: str, label: str, measure: IrMeasure, given: dict[str, object]) -> Measure:
    params = measure.params
    alpha = float(params.get("alpha", 0.5))
    if not 0 <= alpha <= 1:
        raise UserError(
            f"{{measures}}: {text}: alpha must be between 0 and 1, e.g. alpha_nDCG(alpha=0.5)@10", "measures"
        )
    if params.get("judged_only"):
        raise UserError(f"{{measures}}: {text}: judged_only is not supported for alpha_nDCG", "measures")
    cutoff = params.get("cutoff")
    if cutoff is None:
        raise UserError(f"{{measures}}: {text} needs an integer cutoff, e.g. alpha_nDCG@10", "measures")
    name = f"alpha_ndcg_cut_{cutoff}"
    return Measure(name, "alpha_nDCG", name, label, given.get("rel"), alpha=alpha, cutoff=cutoff)


# --- public ------------------------------------------------------------------------------------


def _suggest(text: str) -> str:
    """``; did you mean X, Y?`` from the names closest to ``text``, its parameters kept
    (``nDGC@10`` -> ``nDCG@10``, ``ndgc_cut.10`` -> ``ndcg_cut.10``, ``ndgc_cut_10`` -> ``ndcg_cut_10``)."""
    output_name = re.match(r"^(.+?)(_[0-9.,=\-]+)$", text)
    head = output_name if output_name else re.match(r"^[^\s(@.=]+", text)
    base = head.group(1) if output_name else (head.group(0) if head else text)
    tail = text[len(base) :]
    supported, nicknames = _supported()
    computed = [n for n, m in _ir_registry().items() if n.isascii() and _computed_here(m.NAME)]
    if tail.startswith(("@", "(")):  # ir_measures syntax: its names only
        names = [_ir_registry()[n].NAME for n in computed] + computed
    else:
        names = [n for n in supported if not output_name or n in _PARAMS] + computed
        names += [] if tail else list(nicknames)
    candidates: dict[str, str] = {}
    for n in names:
        candidates.setdefault(n.casefold(), n)
    close = difflib.get_close_matches(base.casefold(), list(candidates), n=3, cutoff=0.6)
    return f"; did you mean {', '.join(candidates[c] + tail for c in close)}?" if close else ""


def parse_measure(text: str) -> list[Measure]:
    """Measures named by one name (several for ``P.5,10`` or ``official``)."""
    text = text.strip()
    trec_eval = trec_eval_request(text)  # exact trec_eval names never load ir_measures
    name = None if trec_eval is not None else _ir_name(text, ignore_case=False)
    if trec_eval is None and name is None:  # exact spellings first, then in any case
        trec_eval = trec_eval_request(text, ignore_case=True)
        name = _ir_name(text, ignore_case=True)
    if trec_eval is not None:
        request, spelled = trec_eval
        return _trec_eval_measures(request, spelled, None)
    if name is None:
        raise UserError(
            f"{{measures}}: unknown measure {text!r}{_suggest(text)} "
            "(trec_eval names like ndcg_cut.10, P_10, map, recip_rank, "
            "or ir_measures names like nDCG@10, P(rel=2)@20, RR(rel=2)@10, Judged@10)",
            "measures",
        )
    measure, given = _parse_ir(text, name)
    label = name + text[len(name) :]  # the user's spelling, the measure's name in its own case
    return _from_ir(text, label, measure, given)


def split_names(text: str) -> list[str]:
    """The names in one ``-m`` value: separated by commas or blanks outside brackets, except that
    trec_eval's parameter lists keep their commas (``P.5,10``, ``utility.2,-1,0,0``)."""
    parts: list[str] = []
    current, depth, after_comma = "", 0, False
    for ch in text + " ":
        depth += (ch in "([{") - (ch in ")]}")
        if depth > 0 or ch not in ", \t\n":
            current += ch
            continue
        if current:
            continues = after_comma and parts and re.fullmatch(r"-?[0-9.]+(=-?[0-9.]+)?", current)
            if continues and "@" not in parts[-1] and ")" not in parts[-1]:
                parts[-1] += "," + current
            else:
                parts.append(current)
            current = ""
        after_comma = ch == ","
    return parts


def _given(texts: object) -> list[str | Measure]:
    """The measures a caller gave, each a name or a :class:`Measure`: one or a list of them,
    ir_measures objects (``ir_measures.nDCG@10``) by their name; anything else is an error."""
    one = isinstance(texts, str | Measure) or not isinstance(texts, Iterable)
    given = [texts] if one else list(texts)  # type: ignore[call-overload]
    out: list[str | Measure] = []
    for item in given:
        if isinstance(item, str | Measure):
            out.append(item)
            continue
        import ir_measures  # only now: names alone never load it

        if not isinstance(item, ir_measures.Measure):
            raise expected("measures", "measure names or ir_measures measures (nDCG@10)", item)
        out.append(str(item))
    return out


def parse_measures(texts: Iterable[str | Measure] | str) -> list[Measure]:
    """All measures of several ``-m`` values (or :class:`Measure` objects), first occurrence
    kept, in the order given.

    One measure named twice (``-m recip_rank -m mrr``) is an error naming both names: its report
    has one row, under the first name, and asking for the second later would find nothing. A
    measure that a group (``official``, ``all_trec``, ``P.5,10``) also holds is simply kept once.
    """
    seen: dict[tuple, Measure] = {}
    named: dict[tuple, str] = {}  # measures asked for one by one, by the name they were given
    for text in _given(texts):
        if isinstance(text, Measure):
            seen.setdefault(text.identity, text)
            continue
        for part in split_names(text):
            if part == "runid":  # a line trec_eval prints, not a number: see wants_runid()
                continue
            found = parse_measure(part)
            if len(found) == 1 and found[0].identity in named:
                first = named[found[0].identity]
                same = "given twice" if first == part else f"the same measure as {first}"
                raise UserError(f"{{measures}}: {part} is {same}; give it once", "measures")
            if len(found) == 1:
                named[found[0].identity] = part
            for m in found:
                seen.setdefault(m.identity, m)
    if not seen:
        raise UserError("{measures}: give at least one measure", "measures")
    return list(seen.values())


def relstring_request(texts: list[str]) -> tuple[list[str], tuple[str, int] | None]:
    """The ``-m`` values without ``relstring`` requests, and the relstring trec_eval prints for
    them: ``(name, length)`` (``relstring`` of 10 documents, in ``all_trec`` too; ``relstring.20``
    as ``relstring_20``, the last such request winning as trec_eval's parameters do), or None."""
    _, nicknames = _supported()
    wanted: tuple[str, int] | None = None
    kept = []
    for text in texts:
        parts = split_names(text)
        for p in parts:
            base, _, params = p.partition(".")
            if base == "relstring":
                if params and not re.fullmatch(r"[0-9]+", params):
                    raise UserError(
                        f"{{measures}}: {p}: relstring takes one length (relstring.20)", "measures"
                    )
                wanted = (f"relstring_{params}", int(params)) if params else ("relstring", 10)
            elif "relstring" in nicknames.get(p, ()) and wanted is None:
                wanted = ("relstring", 10)
        rest = [p for p in parts if p.partition(".")[0] != "relstring"]
        if rest:
            kept.append(" ".join(rest) if len(rest) < len(parts) else text)
    return kept, wanted


def wants_runid(texts: list[str]) -> bool:
    """Whether trec_eval would print the ``runid`` line for these ``-m`` values."""
    _, nicknames = _supported()
    parts = [p for t in texts for p in split_names(t)]
    return any(p == "runid" or "runid" in nicknames.get(p, ()) for p in parts)
