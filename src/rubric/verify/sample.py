"""`rubric verify sample`: which topics to give to human assessors, and which passages to check.

Two different things, kept apart on purpose:

* **Topics for the estimate.** `rubric evaluate estimate` needs the judged topics to be a
  uniform random sample of the topics with LLM labels: this draws one, seeded, so the draw can
  be repeated and shown. With ``strata`` the topics are first cut into groups by the LLM's mean
  label (topics with few and with many relevant passages) and each group gets its share of the
  sample (proportional allocation, largest remainders): every topic then still has about the
  same chance ``n/N`` to be drawn, so the estimate treats it as a uniform sample. When the shares
  are whole numbers the chance is exactly ``n/N`` (the estimate is unbiased and its interval, which
  ignores the gain of stratification, a little conservative); otherwise the chances differ by at
  most one topic per group, which the command states.
* **Passages to correct.** Passages ordered by how likely their LLM label is wrong: the grade
  kinds of the file (prompt classes, graders) disagree on them, or their label sits at the
  relevance threshold. Reviewing them first catches the most errors per hour, but they are
  chosen by their grades, so they are *not* a random sample: human labels gathered this way
  must not be used for the estimate (the list says so).

The topics are written one id per line (with ``#`` comment lines), the format ``--queries``
reads in every command.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rubric.data.grade_filter import GradeFilter
from rubric.data.labels import LabelRule, direct_label
from rubric.data.query_selection import Queries, QuerySelection
from rubric.data.table import Table
from rubric.errors import UserError
from rubric.verify.review import HUMAN_PROMPT_CLASS

HUMAN = HUMAN_PROMPT_CLASS

NOT_FOR_ESTIMATE = (
    "chosen by their grades, not at random: human labels of these passages must not be used for "
    "`evaluate estimate` (use the sampled topics for that)"
)


@dataclass
class TopicSample:
    """The drawn topics (sorted), of how many, and how they were drawn."""

    topics: list[str]
    population: int
    seed: int
    strata: list[tuple[int, int]] = field(default_factory=list)  # (topics in the group, drawn)

    def exact(self) -> bool:
        """Every topic had the same chance n/N to be drawn."""
        n, big_n = len(self.topics), self.population
        return all(drawn * big_n == size * n for size, drawn in self.strata)

    def header(self) -> list[str]:
        lines = [
            f"{len(self.topics)} of {self.population} topics drawn uniformly at random (seed {self.seed}) "
            "for human judgments of every pooled passage",
            "review these with `verify html --queries FILE`; give `evaluate estimate` every topic "
            "(no --queries: it must see all the topics with LLM labels, and learns which are "
            "judged from the human labels)",
        ]
        if self.strata:
            shares = ", ".join(f"{d} of {s}" for s, d in self.strata)
            lines.append(f"stratified by the LLM's mean label: {shares}")
            if not self.exact():
                lines.append(
                    "the shares are rounded, so chances differ slightly between groups; "
                    "`evaluate estimate` treats the sample as uniform"
                )
        return lines

    def text(self) -> str:
        return "".join(f"# {h}\n" for h in self.header()) + "".join(f"{t}\n" for t in self.topics)


def draw(topics: list[str], size: int, seed: int, strata_of: dict[str, int] | None = None) -> TopicSample:
    """``size`` of ``topics`` uniformly at random (seeded), or proportionally from each stratum."""
    topics = sorted(topics)
    if not 2 <= size <= len(topics):
        raise UserError(
            f"{{size}}: {size} topics cannot be drawn from {len(topics)} (at least 2, at most all)", "size"
        )
    rng = np.random.default_rng(seed)
    if not strata_of:
        chosen = rng.choice(len(topics), size, replace=False)
        return TopicSample(sorted(topics[i] for i in chosen), len(topics), seed)
    groups: dict[int, list[str]] = {}
    for t in topics:
        groups.setdefault(strata_of[t], []).append(t)
    keys = sorted(groups)
    exact = [size * len(groups[k]) / len(topics) for k in keys]
    counts = [int(x) for x in exact]
    for i in sorted(range(len(keys)), key=lambda i: (-(exact[i] - counts[i]), i))[: size - sum(counts)]:
        counts[i] += 1
    if 0 in counts:  # its topics would have no chance at all: not a sample of these topics
        raise UserError(
            f"{{size}} {size} with {{strata}} {len(keys)}: {counts.count(0)} of the {len(keys)} groups "
            f"would get no topic, so their topics had no chance to be drawn; draw at least one topic "
            f"per group ({{size}} {len(keys)} or more) or use fewer {{strata}}",
            "size",
            "strata",
        )
    picked: list[str] = []
    strata = []
    for k, c in zip(keys, counts, strict=True):
        members = groups[k]
        picked += [members[i] for i in rng.choice(len(members), c, replace=False)]
        strata.append((len(members), c))
    return TopicSample(sorted(picked), len(topics), seed, strata)


def strata_by_mean_label(labels: dict[str, dict[str, int]], k: int) -> dict[str, int]:
    """Topics cut into ``k`` groups of near-equal size by their passages' mean LLM label."""
    if k < 2:
        raise UserError(f"{{strata}}: {k} groups; stratify into at least 2 (or leave it out)", "strata")
    ordered = sorted(labels, key=lambda q: (sum(labels[q].values()) / max(len(labels[q]), 1), q))
    if k > len(ordered):
        raise UserError(f"{{strata}}: {k} groups of {len(ordered)} topics", "strata")
    return {q: i * k // len(ordered) for i, q in enumerate(ordered)}


def _label(g, rule: LabelRule) -> int:  # noqa: ANN001 - a GradeRecord
    return rule.apply(list(g.grades.values())) if g.exam else direct_label(g.direct_grade, rule)


def passage_labels(
    graded: str | Path, grades: GradeFilter, rule: LabelRule, queries: QuerySelection
) -> dict[str, dict[str, int]]:
    """``{query: {passage: label}}`` of the one kind of grades ``grades`` picks (HumanReview grades
    are never picked: they are what the humans will add), as `evaluate qrels` labels them."""
    from rubric.data.grade_filter import resolve_kind
    from rubric.data.graded import graded_input

    labels: dict[str, dict[str, int]] = {}
    with graded_input(graded, queries) as source:
        kind = resolve_kind(source.survey.kinds, grades, source.source, exclude_prompt_class=HUMAN)
        for q in source.queries():
            for p in q.passages:
                if (g := p.first(kind)) is not None:
                    labels.setdefault(q.query_id, {})[p.paragraph_id] = _label(g, rule)
    return labels


def sample_topics(
    graded: str | Path,
    grades: GradeFilter,
    *,
    size: int,
    seed: int = 42,
    strata: int = 0,
    label: str = "max",
    min_grade: int = 1,
    queries: Queries = None,
) -> TopicSample:
    """Draw the topics to judge from those the selected grades label (see the module docstring)."""
    if size < 2:
        raise UserError(f"{{size}}: {size}; an estimate needs at least 2 judged topics", "size")
    if strata == 1 or strata < 0:
        raise UserError(f"{{strata}}: {strata} groups; stratify into at least 2 (or leave it out)", "strata")
    grades.check()
    rule = LabelRule.parse(label, min_grade)
    labels = passage_labels(graded, grades, rule, QuerySelection.of(queries))
    if not labels:
        raise UserError(f"{graded}: no passage has grades of the selected kind")
    strata_of = strata_by_mean_label(labels, strata) if strata else None
    return draw(list(labels), size, seed, strata_of)


def passages_to_check(
    graded: str | Path,
    *,
    level: int = 1,
    label: str = "max",
    min_grade: int = 1,
    queries: Queries = None,
    exclude: Iterable[str] = (HUMAN,),
) -> Table:
    """Every graded passage with the labels each grade kind of the file gives it, ordered by how
    likely the LLM label is wrong: the kinds' disagreement (highest label minus lowest) first,
    then labels at the threshold (``level - 1`` or ``level``), then query and passage."""
    from rubric.data.graded import graded_input

    rule = LabelRule.parse(label, min_grade)
    skip = set(exclude)
    rows = []
    with graded_input(graded, QuerySelection.of(queries)) as source:
        for q in source.queries():
            for p in q.passages:
                found: dict[str, int] = {}
                for g in p.all_grades():
                    if g.kind.prompt_class in skip:
                        continue
                    name = f"{g.kind.prompt_class}/{g.kind.llm}"
                    found[name] = (
                        direct_label(g.direct_grade, rule)
                        if not g.exam
                        else rule.apply(list(g.grades.values()))
                    )
                if not found:
                    continue
                values = list(found.values())
                spread = max(values) - min(values)
                at_threshold = sum(v in (level - 1, level) for v in values)
                kinds = "; ".join(f"{k}={v}" for k, v in sorted(found.items()))
                rows.append((spread, at_threshold, q.query_id, p.paragraph_id, kinds))
    rows.sort(key=lambda r: (-r[0], -r[1], r[2], r[3]))
    return Table(
        ["query", "passage", "disagreement", "labels_at_threshold", "labels"],
        [[q, d, s, t, k] for s, t, q, d, k in rows],
        title=f"passages to check first (relevance threshold {level})",
        notes=[NOT_FOR_ESTIMATE],
    )


def sample_files(
    graded: str | Path,
    grades: GradeFilter,
    output: str | Path,
    *,
    size: int,
    seed: int = 42,
    strata: int = 0,
    label: str = "max",
    min_grade: int = 1,
    level: int = 1,
    passages: str | Path | None = None,
    html: str | Path | None = None,
    item_texts: dict[str, str] | None = None,
    queries: Queries = None,
) -> list[str]:
    """`rubric verify sample`: write the drawn topics to ``output`` (one id per line), and where
    asked the passages to check first (``passages``, TSV) and the review page of the drawn topics
    (``html``, as `verify html --queries`); returns the lines for stderr. Options are checked
    before any file is read."""
    from rubric.data.files import write_output

    if isinstance(level, bool) or not isinstance(level, int) or level < 1:
        raise UserError(f"{{level}}: {level!r} is not a relevance level (a whole number >= 1)", "level")
    chosen = QuerySelection.of(queries)
    drawn = sample_topics(
        graded, grades, size=size, seed=seed, strata=strata, label=label, min_grade=min_grade, queries=chosen
    )
    write_output(output, drawn.text(), inputs=[graded])
    notes = [*drawn.header(), f"wrote {output}"]
    if passages is not None:
        table = passages_to_check(graded, level=level, label=label, min_grade=min_grade, queries=chosen)
        write_output(passages, table.render("tsv"), inputs=[graded])
        notes.append(f"wrote {passages}: passages to check first; {NOT_FOR_ESTIMATE}")
    if html is not None:
        from rubric.verify.html import review_page
        from rubric.verify.report import GradedSelection

        page = GradedSelection(Path(graded), grades, QuerySelection(tuple(drawn.topics)))
        review_page(page, Path(html), item_texts, "auto")  # its "wrote" line goes to the log
    return notes
