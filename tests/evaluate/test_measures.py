from __future__ import annotations

import pytest

from rubric.errors import UserError
from rubric.evaluate.measures import parse_measure, parse_measures, wants_runid


def one(text):
    (m,) = parse_measure(text)
    return m.request, m.key, m.name, m.level


def test_trec_eval_names():
    assert one("ndcg_cut.10") == ("ndcg_cut.10", "ndcg_cut_10", "ndcg_cut_10", None)
    assert one("map") == ("map", "map", "map", None)
    # pytrec_eval drops the parameters from the key; trec_eval prints them
    assert one("utility.2,-1,0,0") == ("utility.2,-1,0,0", "utility", "utility_2,-1,0,0", None)
    assert [m.key for m in parse_measure("P.5,10")] == ["P_5", "P_10"]
    assert len(parse_measure("official")) == 29  # 11 iprec, 9 P, 9 others; not runid (a string)


def test_ir_measures_names():
    assert one("nDCG@10") == ("ndcg_cut.10", "ndcg_cut_10", "ndcg_cut_10", None)
    assert one("nDCG") == ("ndcg", "ndcg", "ndcg", None)
    assert one("P(rel=2)@20") == ("P.20", "P_20", "P_20", 2)
    assert one("AP(rel=2)") == ("map", "map", "map", 2)
    assert one("AP@100") == ("map_cut.100", "map_cut_100", "map_cut_100", None)
    assert one("RR(rel=2)") == ("recip_rank", "recip_rank", "recip_rank", 2)
    assert one("R@1000") == ("recall.1000", "recall_1000", "recall_1000", None)
    assert one("Rprec") == ("Rprec", "Rprec", "Rprec", None)
    assert parse_measure("P(rel=2)@20")[0].label == "P(rel=2)@20"


def test_unknown_and_bad_measures_name_the_option():
    with pytest.raises(UserError, match=r"-m: unknown measure 'ndgc_cut\.10'; did you mean ndcg_cut"):
        parse_measure("ndgc_cut.10")
    with pytest.raises(UserError, match="takes no rel="):
        parse_measure("nDCG(rel=2)@10")
    with pytest.raises(UserError, match="needs a cutoff"):
        parse_measure("P")
    with pytest.raises(UserError, match="no cutoff for RR"):
        parse_measure("RR@10")
    with pytest.raises(UserError, match="not a number"):
        parse_measure("relstring")


def test_parse_measures_keeps_order_and_drops_duplicates():
    ms = parse_measures(["nDCG@10", "map ndcg_cut.10", "P(rel=2)@5", "P@5"])
    assert [(m.name, m.level) for m in ms] == [
        ("ndcg_cut_10", None),
        ("map", None),
        ("P_5", 2),
        ("P_5", None),
    ]
    assert wants_runid(["official"]) and not wants_runid(["map"])
