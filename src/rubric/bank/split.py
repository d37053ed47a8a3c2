"""Split a bank into a public and a secret part, by item, stratified per query.

The Autograding Workbench paper recommends that organisers keep part of the test bank secret so
systems cannot "study to the test": participants see the public items; evaluation with the
secret items publishes only leaderboards and qrels, never the items.

Each bank (query or facet) of n items keeps ``round(n * (1 - secret))`` public items (halves
round up), and at least one item on each side when n >= 2. Which items go secret is decided by
the sha256 of ``(seed, item id)``, not by a random generator's order, so a seed gives the same
split on every run, machine and Python version, and an item keeps its side when other items are
added or removed unless the counts force a change. Both parts keep every field of the original
records and the items' original order, so public + secret = the original bank.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from rubric.data.jsonl import read_banks, write_bank
from rubric.data.models import TestBank
from rubric.errors import UserError


def public_count(n: int, secret: float) -> int:
    """How many of a bank's ``n`` items stay public."""
    keep = math.floor(n * (1.0 - secret) + 0.5)
    if n >= 2:
        keep = min(max(keep, 1), n - 1)
    return keep


def _rank_key(seed: int, item_id: str) -> bytes:
    return hashlib.sha256(f"{seed}\0{item_id}".encode()).digest()


@dataclass
class Split:
    public: list[TestBank]
    secret: list[TestBank]

    @property
    def counts(self) -> tuple[int, int]:
        return sum(len(b.items) for b in self.public), sum(len(b.items) for b in self.secret)

    def summary(self, public_out: Path, secret_out: Path) -> str:
        """One line: the items and banks of each part and where they went."""
        n_public, n_secret = self.counts
        return (
            f"{n_public} public items in {len(self.public)} banks -> {public_out}; "
            f"{n_secret} secret items in {len(self.secret)} banks -> {secret_out}"
        )


def split_banks(banks: Iterable[TestBank], secret: float, seed: int) -> Split:
    """Split every bank; a bank with no items on one side is left out of that part."""
    if not 0.0 < secret < 1.0:
        raise UserError(
            f"{{secret}}: expected a fraction between 0 and 1 (exclusive), got {secret}", "secret"
        )
    result = Split([], [])
    for bank in banks:
        n = len(bank.items)
        n_secret = n - public_count(n, secret)
        ranked = sorted(bank.items, key=lambda it: _rank_key(seed, it.item_id))
        hidden = {id(it) for it in ranked[:n_secret]}
        public = [it for it in bank.items if id(it) not in hidden]
        secret_items = [it for it in bank.items if id(it) in hidden]
        if public or not secret_items:
            result.public.append(bank.model_copy(update={"items": public}))
        if secret_items:
            result.secret.append(bank.model_copy(update={"items": secret_items}))
    return result


def split_bank_file(bank: Path, secret: float, seed: int, public_out: Path, secret_out: Path) -> Split:
    """`rubric bank split`: split the banks of ``bank`` into the two files (``secret`` is
    checked before the bank is read)."""
    result = split_banks(read_banks(bank), secret, seed)
    write_bank(public_out, result.public)
    write_bank(secret_out, result.secret)
    return result
