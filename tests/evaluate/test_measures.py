from __future__ import annotations

import pytest

from rubric.errors import UserError
from rubric.evaluate.measures import parse_measure, parse_measures, split_names, wants_runid


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
    assert len(parse_measure("P")) == 9  # trec_eval's P: its default cutoffs 5 ... 1000


def test_trec_eval_output_names_are_accepted_as_input():
    assert one("P_10") == ("P.10", "P_10", "P_10", None)
    assert one("ndcg_cut_10") == ("ndcg_cut.10", "ndcg_cut_10", "ndcg_cut_10", None)
    assert one("map_cut_100") == ("map_cut.100", "map_cut_100", "map_cut_100", None)
    name = "iprec_at_recall_0.00"
    assert one(name) == ("iprec_at_recall.0.00", name, name, None)
    assert one("Rprec_mult_0.20")[2] == "Rprec_mult_0.20"
    assert one("relative_P_5")[0] == "relative_P.5"
    # everything `-m official` prints parses back to the same measures
    official = parse_measure("official")
    assert [m.name for n in official for m in parse_measure(n.name)] == [m.name for m in official]


def test_ir_measures_names():
    assert one("nDCG@10") == ("ndcg_cut.10", "ndcg_cut_10", "ndcg_cut_10", None)
    assert one("nDCG") == ("ndcg", "ndcg", "ndcg", None)
    assert one("P(rel=2)@20") == ("P.20", "P_20", "P_20", 2)
    assert one("AP(rel=2)") == ("map", "map", "map", 2)
    assert one("AP@100") == ("map_cut.100", "map_cut_100", "map_cut_100", None)
    assert one("RR(rel=2)") == ("recip_rank", "recip_rank", "recip_rank", 2)
    assert one("R@1000") == ("recall.1000", "recall_1000", "recall_1000", None)
    assert one("Rprec") == ("Rprec", "Rprec", "Rprec", None)
    assert one("NumRelRet") == ("num_rel_ret", "num_rel_ret", "num_rel_ret", None)  # follows -l
    assert one("SetRelP")[0] == "set_relative_P"
    assert one("SetF(beta=0.5)")[2] == "set_F_0.5"
    assert one("IPrec@0.5")[2] == "iprec_at_recall_0.50"
    assert parse_measure("P(rel=2)@20")[0].label == "P(rel=2)@20"
    (m,) = parse_measure("nDCG(judged_only=True,gains={0:0,1:1,2:3})@10")
    assert (m.request, m.judged_only, m.gains) == ("ndcg_cut.10", True, ((0, 0), (1, 1), (2, 3)))


def test_measures_computed_here():
    assert one("RR(rel=2)@10") == ("RR", "RR(rel=2)@10", "RR(rel=2)@10", 2)
    assert one("MRR@10") == ("RR", "RR@10", "RR@10", None)
    assert one("Judged@10") == ("Judged", "Judged@10", "Judged@10", None)
    assert one("ERR@20") == ("ERR", "ERR@20", "ERR@20", None)
    assert parse_measure("ERR@20")[0].cutoff == 20
    assert one("alpha_nDCG(alpha=0.3,rel=2)@5") == ("alpha_nDCG", "alpha_ndcg_cut_5", "alpha_ndcg_cut_5", 2)


@pytest.mark.parametrize("typed", ["ndcg@10", "NDCG@10", "Ndcg@10", "ndcg_cut_10", "NDCG_CUT.10"])
def test_names_in_any_case(typed):
    assert one(typed)[2] == "ndcg_cut_10"


def test_case_is_fixed_in_the_label():
    assert parse_measure("ndcg@10")[0].label == "nDCG@10"
    assert parse_measure("Map")[0].label == "map" and parse_measure("MAP")[0].label == "MAP"
    assert parse_measure("p_10")[0].label == "P_10"
    assert parse_measure("mrr@10")[0].label == "MRR@10"


def test_lists_in_one_value():
    assert split_names("nDCG@10,P@5") == ["nDCG@10", "P@5"]
    assert split_names("P.5,10,map") == ["P.5,10", "map"]
    assert split_names("utility_2,-1,0,0, P_10") == ["utility_2,-1,0,0", "P_10"]
    assert split_names("P(rel=2, judged_only=True)@10 map") == ["P(rel=2, judged_only=True)@10", "map"]
    assert split_names("nDCG(gains={0:0,1:1})@10,ERR@10") == ["nDCG(gains={0:0,1:1})@10", "ERR@10"]
    assert [m.label for m in parse_measures("nDCG@10,P@5")] == ["nDCG@10", "P@5"]


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        ("ndgc_cut.10", r"unknown measure 'ndgc_cut\.10'; did you mean ndcg_cut\.10\?"),
        ("ndgc_cut_10", r"did you mean ndcg_cut_10\?"),
        ("nDGC@10", r"did you mean nDCG@10"),
        ("offical", r"did you mean official\?"),
        ("P.abc", r"measures: P\.abc: P takes positive integer cutoffs, e.g. P\.10"),
        ("P.0", "positive integer cutoffs"),
        ("P.5,5", "without repeats"),
        ("utility.x", r"measures: utility\.x: utility takes 4 numbers"),
        ("utility.1,2", "takes 4 numbers"),
        ("set_F.0", "one positive beta"),
        ("iprec_at_recall.2", "recall levels between 0 and 1"),
        ("ndcg.x", "grade=gain pairs"),
        ("map.5", "map takes no parameters"),
        ("official.5", "official takes no parameters"),
        ("nDCG@x", r"measures: nDCG@x: the cutoff after @ must be a positive integer, e.g. nDCG@10"),
        ("P@0", "the cutoff must be a positive integer"),
        ("R", r"R needs a cutoff, e.g. R@10"),
        ("nDCG(rel=2)@10", "uses the graded labels as gains"),
        ("ERR(rel=2)@10", "ERR takes @cutoff; got rel"),
        ("P(foo=1)@10", "P takes @cutoff, rel=, judged_only=; got foo"),
        ("P(rel=x)@10", r"write P\(param=value,...\)@cutoff"),
        ("RBP(p=0.5)", "ir_measures computes RBP with another tool"),
        ("nDCG(dcg='exp-log2')@10", "only trec_eval's nDCG"),
        ("nDCG(gains={1:1.5})@10", "integer gains"),
        ("relstring", "not a number"),
        ("RR@0", "positive integer"),
    ],
)
def test_bad_names_and_parameters_name_the_option_and_a_fix(typed, message):
    with pytest.raises(UserError, match=message) as e:
        parse_measures([typed])
    assert str(e.value).startswith("measures: ")  # the parameter; the CLI prints -m


def test_parse_measures_keeps_order_and_refuses_one_measure_named_twice():
    ms = parse_measures(["nDCG@10", "map", "P(rel=2)@5", "P@5"])
    assert [(m.name, m.level) for m in ms] == [
        ("ndcg_cut_10", None),
        ("map", None),
        ("P_5", 2),
        ("P_5", None),
    ]
    with pytest.raises(UserError, match="ndcg_cut_10 is the same measure as nDCG@10"):
        parse_measures(["nDCG@10", "map", "ndcg_cut_10"])
    assert len(parse_measures(["P.5,10", "P.10"])) == 2  # a group and one of its measures: once
    assert wants_runid(["official"]) and not wants_runid(["map"])
