"""`rubric bank split`: public and secret banks, by item, stratified per query, deterministic."""

from __future__ import annotations

from pathlib import Path

import pytest

from rubric.bank.split import public_count, split_banks
from rubric.data.jsonl import read_bank
from rubric.data.models import NuggetItem, TestBank
from rubric.errors import UserError

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "tiny"


@pytest.mark.parametrize(
    "n,secret,public",
    [(0, 0.3, 0), (1, 0.3, 1), (1, 0.6, 0), (2, 0.3, 1), (2, 0.9, 1), (2, 0.01, 1), (5, 0.3, 4),
     (6, 0.3, 4), (10, 0.3, 7), (10, 0.25, 8), (3, 0.5, 2), (20, 0.5, 10)],
)  # fmt: skip
def test_public_count_rounds_half_up_and_keeps_both_sides(n, secret, public):
    assert public_count(n, secret) == public


def bank(qid: str, n: int) -> TestBank:
    items = [NuggetItem(query_id=qid, nugget_id=f"{qid}/{i:02d}", nugget_text=f"fact {i}") for i in range(n)]
    return TestBank(query_id=qid, query_text=f"query {qid}", items=items)


def test_split_depends_on_seed_and_item_ids_only():
    banks = [bank("q1", 10), bank("q2", 3), bank("q3", 1), bank("q4", 0)]
    a = split_banks(banks, 0.3, seed=7)
    b = split_banks(list(reversed(banks)), 0.3, seed=7)
    secret_a = {i.item_id for x in a.secret for i in x.items}
    assert secret_a == {i.item_id for x in b.secret for i in x.items}
    assert a.counts == (7 + 2 + 1, 3 + 1) and [x.query_id for x in a.secret] == ["q1", "q2"]
    assert [x.query_id for x in a.public] == ["q1", "q2", "q3", "q4"]  # an empty bank stays public
    other = {i.item_id for x in split_banks(banks, 0.3, seed=8).secret for i in x.items}
    assert other != secret_a
    # an item keeps its side when another query's items change
    grown = split_banks([bank("q1", 10), bank("q2", 30)], 0.3, seed=7)
    assert {i.item_id for i in grown.secret[0].items} == {i.item_id for i in a.secret[0].items}
    with pytest.raises(UserError, match="secret: expected a fraction"):
        split_banks(banks, 1.0, seed=7)


def test_cli_split_twice_is_identical_and_parts_add_up(cli, user_error, tmp_path):
    original = list(read_bank(EXAMPLE / "nuggets.jsonl"))
    outs = []
    for run in ("a", "b"):
        pub, sec = tmp_path / f"public-{run}.jsonl.gz", tmp_path / f"secret-{run}.jsonl.gz"
        result = cli("bank", "split", EXAMPLE / "nuggets.jsonl", "--secret", "0.3", "--seed", "13",
                     "--public-out", pub, "--secret-out", sec)  # fmt: skip
        assert result.returncode == 0, result.stderr
        outs.append((pub.read_bytes(), sec.read_bytes()))
    assert outs[0] == outs[1]
    assert "20 public items in 5 banks" in result.stderr and "10 secret items in 5 banks" in result.stderr
    public = {b.query_id: b for b in read_bank(tmp_path / "public-a.jsonl.gz")}
    secret = {b.query_id: b for b in read_bank(tmp_path / "secret-a.jsonl.gz")}
    for b in original:
        pub, sec = public[b.query_id], secret[b.query_id]
        assert (len(pub.items), len(sec.items)) == (4, 2)  # 6 nuggets per query: round(4.2) public
        # same records, same ids, same order within each part; together exactly the original
        assert (
            pub.model_copy(update={"items": []})
            == b.model_copy(update={"items": []})
            == sec.model_copy(update={"items": []})
        )
        order = {i.item_id: k for k, i in enumerate(b.items)}
        for part in (pub, sec):
            assert [order[i.item_id] for i in part.items] == sorted(order[i.item_id] for i in part.items)
        merged = sorted([*pub.items, *sec.items], key=lambda i: order[i.item_id])
        assert [i.to_json() for i in merged] == [i.to_json() for i in b.items]
    other = tmp_path / "secret-c.jsonl.gz"
    cli("bank", "split", EXAMPLE / "nuggets.jsonl", "--secret", "0.3", "--seed", "14",
        "--public-out", tmp_path / "public-c.jsonl.gz", "--secret-out", other)  # fmt: skip
    assert other.read_bytes() != outs[0][1]

    bad = tmp_path / "x.jsonl"
    user_error(
        cli("bank", "split", EXAMPLE / "nuggets.jsonl", "--secret", "0", "--seed", "1",
            "--public-out", bad, "--secret-out", tmp_path / "y.jsonl"),
        "--secret: expected a fraction between 0 and 1",
    )  # fmt: skip
    user_error(
        cli("bank", "split", EXAMPLE / "nuggets.jsonl", "--secret", "0.3", "--seed", "1",
            "--public-out", bad, "--secret-out", bad),
        "is also the output of --public-out",
    )  # fmt: skip
    assert not bad.exists()
