"""Learned relevance labels: a classifier from a passage's grades to human relevance labels.

TREMA-UNH's LLMJudge submission did not map grades to labels by a hand rule; it trained a
classifier (ExtraTrees, RandomForest) on features of all grades of a passage and predicted the
0-3 labels. This module rebuilds its features exactly (:func:`passage_features`), trains the same
classifiers with the same settings, cross-validates by topic (a topic's passages are never split
between training and held-out folds, so the held-out kappa is that of unseen topics) and labels
every passage of the file.

Features of one passage, per prompt class of the feature set (in this order: nuggets, questions,
then the direct prompts), as the original built them:

* 0-5 self-rating prompts (``NuggetSelfRatedPrompt``,
  ``QuestionSelfRatedUnanswerablePromptWithChoices``): the passage's ratings of the query's items,
  padded with 0 or cut to 10, sorted three ways (by the item's mean rating over the file, by how
  often the item was rated 4 or 5, by the rating itself; each descending, ties in file order) and
  encoded as integers and as one-hot vectors (integers sorted by mean rating, one-hot by mean
  rating, one-hot by 4-or-5 count, integers by rating, one-hot by rating), then how many items
  were rated at least 0, 1, 2, 3, 4: 205 numbers;
* direct prompts (FagB, FagB_few, HELM, Sun, Sun_few on 0-1, Thomas on 0-2): the grade and its
  one-hot vector.

A grade outside the prompt's scale counts as 0. A prompt class a passage has no grade of adds no
features, so every passage must have the same prompt classes (checked). Features are scaled to
zero mean and unit variance before the classifier (fitted on the training passages).

scikit-learn is the optional ``learn`` extra; it is imported only here, when a model is trained.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rubric.data.graded import GradedFile, QueryRecord
from rubric.data.kappa import kappa_from_counts
from rubric.data.query_selection import QuerySelection
from rubric.data.trec import read_qrels, write_qrels
from rubric.errors import UserError, at_least, one_of

#: The prompt classes of each feature set and the grades each can give (the original's sets).
SELF_RATED_CLASSES = {
    "nuggets": {"NuggetSelfRatedPrompt": range(6)},
    "questions": {"QuestionSelfRatedUnanswerablePromptWithChoices": range(6)},
    "direct": {
        "FagB": range(2),
        "FagB_few": range(2),
        "HELM": range(2),
        "Sun": range(2),
        "Sun_few": range(2),
        "Thomas": range(3),
    },
}
FEATURE_SETS = ("all", "questions", "nuggets", "direct")
#: The classifiers and their settings as the original trained them.
CLASSIFIERS = ("extra-trees", "random-forest")
EXPECTED_RATINGS = 10


def prompt_classes(feature_set: str) -> dict[str, range]:
    """The prompt classes (and their scales) of a feature set, in the original's order."""
    if feature_set not in FEATURE_SETS:
        one_of("feature_set", feature_set, FEATURE_SETS)
    names = ("nuggets", "questions", "direct") if feature_set == "all" else (feature_set,)
    out: dict[str, range] = {}
    for name in names:
        out.update(SELF_RATED_CLASSES[name])
    return out


Pair = tuple[str, str]  # (query id, passage id)


@dataclass
class GradeTable:
    """Every passage's ratings per prompt class: ``ratings[pair][prompt_class]`` is the list of
    (item id, rating) in file order (one (query, 0-1 grade) entry for a direct prompt)."""

    pairs: list[Pair] = field(default_factory=list)
    ratings: dict[Pair, dict[str, list[tuple[str, int]]]] = field(default_factory=dict)
    self_rated: dict[Pair, list[tuple[str, int]]] = field(default_factory=dict)
    judged: dict[str, dict[str, int]] = field(default_factory=dict)  # the file's own judgments

    @classmethod
    def from_queries(cls, queries: Iterable[QueryRecord]) -> GradeTable:
        table = cls()
        for q in queries:
            for p in q.passages:
                pair = (q.query_id, p.paragraph_id)
                table.pairs.append(pair)
                by_class: dict[str, list[tuple[str, int]]] = defaultdict(list)
                rated: list[tuple[str, int]] = []
                for g in [*p.exam_grades, *p.grades]:
                    if g.exam:
                        got = list(g.grades.items())
                        if g.self_rated:
                            rated.extend(got)
                    else:
                        got = [(q.query_id, g.direct_grade)]
                    by_class[g.kind.prompt_class].extend(got)
                table.ratings[pair] = dict(by_class)
                table.self_rated[pair] = rated
                levels = [rel for query, rel, _ in p.judgments if query == q.query_id]
                if levels:
                    table.judged.setdefault(q.query_id, {})[p.paragraph_id] = max(levels)
        return table

    def topics(self) -> list[str]:
        return list(dict.fromkeys(q for q, _ in self.pairs))


def item_statistics(table: GradeTable, pairs: Iterable[Pair]) -> tuple[dict[str, float], dict[str, int]]:
    """Over the self-ratings of these passages: each item's mean rating and how often it was
    rated 4 or 5 (the two orders of the item features)."""
    hist: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
    for pair in pairs:
        for item, rating in table.self_rated[pair]:
            hist[item][int(rating)] += 1
    mean = {i: sum(r * n for r, n in h.items()) / sum(h.values()) for i, h in hist.items()}
    high = {i: h[4] + h[5] for i, h in hist.items()}
    return mean, high


def _one_hot(size: int, value: int) -> list[float]:
    row = [0.0] * size
    row[value] = 1.0
    return row


def passage_features(
    ratings: dict[str, list[tuple[str, int]]],
    classes: dict[str, range],
    mean: dict[str, float],
    high: dict[str, int],
) -> list[float]:
    """The feature vector of one passage (module docstring)."""
    feats: list[float] = []
    for prompt_class, scale in classes.items():
        got = ratings.get(prompt_class, [])
        if not got:
            continue

        def clamp(x: int, scale: range = scale) -> int:
            return x if x in scale else 0

        if len(scale) <= 3:
            r = clamp(got[0][1])
            feats += [float(r), *_one_hot(len(scale), r)]
            continue

        def rated(key: Callable[[tuple[str, int]], Any], got: list = got) -> list[int]:
            ordered = [clamp(r) for _, r in sorted(got, key=key, reverse=True)][:EXPECTED_RATINGS]
            return ordered + [0] * (EXPECTED_RATINGS - len(ordered))

        by_mean = rated(lambda q: mean.get(q[0], 0.0))
        by_high = rated(lambda q: high.get(q[0], 0))
        by_rating = rated(lambda q: q[1])
        feats += [float(r) for r in by_mean]
        feats += [x for r in by_mean for x in _one_hot(6, r)]
        feats += [x for r in by_high for x in _one_hot(6, r)]
        feats += [float(r) for r in by_rating]
        feats += [x for r in by_rating for x in _one_hot(6, r)]
        feats += [float(sum(1 for _, r in got if r >= n)) for n in range(5)]
    return feats


def feature_matrix(
    table: GradeTable, pairs: Sequence[Pair], classes: dict[str, range], statistics_over: Iterable[Pair]
) -> Any:
    """Rows of :func:`passage_features` for ``pairs``, item statistics over ``statistics_over``;
    every row must have the same length (the same prompt classes graded)."""
    import numpy as np

    mean, high = item_statistics(table, statistics_over)
    rows = [passage_features(table.ratings[p], classes, mean, high) for p in pairs]
    lengths = {len(r) for r in rows}
    if len(lengths) > 1 or not rows or not rows[0]:
        missing = sorted(c for c in classes if not any(c in table.ratings[p] for p in pairs))
        have = sorted({c for p in pairs for c in table.ratings[p]} & set(classes))
        raise UserError(
            "graded: every passage needs grades of the same prompt classes of the feature set "
            f"(has: {', '.join(have) or 'none'}; never graded: {', '.join(missing) or 'none'})"
        )
    return np.array(rows, dtype=float)


def classifier(name: str, seed: int) -> Any:
    """The original's classifier settings, scaled features first."""
    from rubric.extras import require

    require("learn", "learned labels", ("sklearn",))
    from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    if name == "extra-trees":
        model = ExtraTreesClassifier(
            random_state=seed, class_weight="balanced", max_depth=6, n_estimators=60, min_samples_split=20
        )
    elif name == "random-forest":
        model = RandomForestClassifier(
            random_state=seed, class_weight="balanced", max_depth=3, n_estimators=10, min_samples_split=10
        )
    else:
        one_of("method", name, CLASSIFIERS)
    return Pipeline(steps=[("scale", StandardScaler()), ("classify", model)])


def kappa(truth: Sequence[int], predicted: Sequence[int]) -> float:
    """Cohen's (unweighted, multiclass) kappa of two label lists."""
    counts: dict[tuple[int, int], int] = defaultdict(int)
    for a, b in zip(truth, predicted, strict=True):
        counts[(int(a), int(b))] += 1
    return kappa_from_counts(counts)


def topic_folds(topics: Sequence[str], folds: int, seed: int) -> list[list[str]]:
    """Topics shuffled with ``seed`` and dealt into ``folds`` folds (sizes differ by at most one)."""
    at_least("folds", folds, 2)
    if len(topics) < folds:
        raise UserError(
            f"{{folds}}: {folds} folds need at least {folds} topics with labels, got {len(topics)}", "folds"
        )
    order = sorted(topics)
    random.Random(seed).shuffle(order)
    return [order[i::folds] for i in range(folds)]


@dataclass
class FoldResult:
    fold: int
    topics: list[str]
    train_kappa: float
    held_out_kappa: float
    held_out_pairs: int


@dataclass
class LearnResult:
    """Cross-validation by topic, then the labels of every passage by a model trained on all."""

    folds: list[FoldResult]
    labels: dict[Pair, int]
    trained_on: int
    feature_count: int

    def lines(self) -> list[str]:
        out = [
            f"fold {f.fold}: {len(f.topics)} held-out topics, {f.held_out_pairs} passages: "
            f"train kappa {f.train_kappa:.4f}, held-out kappa {f.held_out_kappa:.4f}"
            for f in self.folds
        ]
        if self.folds:
            n = len(self.folds)
            out.append(
                f"mean over {n} folds: train kappa {sum(f.train_kappa for f in self.folds) / n:.4f}, "
                f"held-out kappa {sum(f.held_out_kappa for f in self.folds) / n:.4f}"
            )
        return out


def learn_labels(
    table: GradeTable,
    human: dict[str, dict[str, int]],
    *,
    feature_set: str = "all",
    method: str = "extra-trees",
    folds: int = 5,
    seed: int = 0,
    target: GradeTable | None = None,
) -> LearnResult:
    """Cross-validate by topic on the passages with human labels, then label every passage of
    ``target`` (default: ``table`` itself) with a model trained on all of them. Item statistics
    are taken over the whole file whose passages they describe (they use no labels): a target's
    features use its own items' statistics, as a test set's would with no labels at hand."""
    classes = prompt_classes(feature_set)
    classifier(method, seed)  # the method and scikit-learn checked before any work
    labelled = [p for p in table.pairs if p[1] in human.get(p[0], {})]
    if not labelled:
        raise UserError("{judgments}: no passage of the graded file has a human label", "judgments")
    everything = feature_matrix(table, table.pairs, classes, table.pairs)
    row = {p: i for i, p in enumerate(table.pairs)}
    truth = [human[q][d] for q, d in labelled]
    results = []
    topics = list(dict.fromkeys(q for q, _ in labelled))
    for k, held in enumerate(topic_folds(topics, folds, seed), start=1):
        held_set = set(held)
        train = [i for i, p in enumerate(labelled) if p[0] not in held_set]
        test = [i for i, p in enumerate(labelled) if p[0] in held_set]
        model = classifier(method, seed)
        x_train = everything[[row[labelled[i]] for i in train]]
        model.fit(x_train, [truth[i] for i in train])
        train_kappa = kappa([truth[i] for i in train], model.predict(x_train))
        predicted = model.predict(everything[[row[labelled[i]] for i in test]])
        results.append(
            FoldResult(k, sorted(held), train_kappa, kappa([truth[i] for i in test], predicted), len(test))
        )
    model = classifier(method, seed)
    model.fit(everything[[row[p] for p in labelled]], truth)
    if target is None:
        target, features = table, everything
    else:
        features = feature_matrix(target, target.pairs, classes, target.pairs)
        if features.shape[1] != everything.shape[1]:
            raise UserError(
                f"apply: its passages have {features.shape[1]} features, the training file's "
                f"{everything.shape[1]}: grade both with the same prompt classes of the feature set"
            )
    predicted = model.predict(features)
    labels = {p: int(predicted[i]) for i, p in enumerate(target.pairs)}
    return LearnResult(results, labels, len(labelled), int(everything.shape[1]))


def learn_file(
    graded: str | Path,
    output: str | Path,
    *,
    judgments: str | Path | None = None,
    feature_set: str = "all",
    method: str = "extra-trees",
    folds: int = 5,
    seed: int = 0,
    apply: str | Path | None = None,
) -> list[str]:
    """`rubric evaluate learn`: learned labels of every passage of ``graded`` (or, with ``apply``,
    of that other graded file: train on dev, label test) written to ``output`` (TREC qrels,
    atomically); human labels from ``judgments`` (a qrels file) or the judgments stored in
    ``graded``. Returns the lines for stderr: each fold's kappas and their mean, with ``apply``
    the kappa against the judgments stored in it (if any), what was written. Every option is
    checked before a file is read."""
    try:
        classes = prompt_classes(feature_set)
        classifier(method, seed)
        at_least("folds", folds, 2)
        human = read_qrels(judgments) if judgments is not None else None
        with GradedFile(graded, QuerySelection()) as source:
            table = GradeTable.from_queries(source.queries())
        if human is None:
            human = table.judged
            if not human:
                raise UserError(
                    f"{graded}: holds no judgments; give human labels with {{judgments}} QRELS", "judgments"
                )
        target = None
        if apply is not None:
            with GradedFile(apply, QuerySelection()) as source:
                target = GradeTable.from_queries(source.queries())
            if not target.pairs:
                raise UserError(f"{apply}: holds no passages to label")
        result = learn_labels(
            table, human, feature_set=feature_set, method=method, folds=folds, seed=seed, target=target
        )
    except UserError as e:  # the graded file's problems name the file
        for prefix, path in (("graded: ", graded), ("apply: ", apply)):
            if e.template.startswith(prefix):
                raise UserError(f"{path}: {e.template.removeprefix(prefix)}", *e.parameters) from None
        raise
    n = write_qrels(output, ((q, "0", d, label) for (q, d), label in result.labels.items()))
    graded_classes = {c for r in table.ratings.values() for c in r}
    never = [c for c in classes if c not in graded_classes]
    checked = []
    if target is not None and target.judged:
        pairs = [
            (label, target.judged[q][d])
            for (q, d), label in result.labels.items()
            if d in target.judged.get(q, {})
        ]
        counts: dict[tuple[int, int], int] = defaultdict(int)
        for pair in pairs:
            counts[pair] += 1
        checked.append(
            f"{apply}: kappa {kappa_from_counts(counts):.4f} against its own judgments "
            f"({len(pairs)} passages)"
        )
    return [
        *result.lines(),
        *checked,
        *(
            [f"feature set {feature_set}: never graded: {', '.join(never)} (no features from them)"]
            if never
            else []
        ),
        f"trained on {result.trained_on} labelled passages ({result.feature_count} features, {method}, "
        f"feature set {feature_set}); wrote {n} learned labels"
        f"{f' of {apply}' if apply is not None else ''} to {output}",
    ]
