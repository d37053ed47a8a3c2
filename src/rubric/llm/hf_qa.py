"""``hf-qa``: extractive question answering (SQuAD2-style models), no pipeline.

EXAM++ varies the grader with a SQuAD2-tuned model behind the ``question-answering`` pipeline,
which transformers 5.3 removed. This backend does the same span decoding itself: the best span
``start <= end`` inside the context (at most ``max_answer_tokens`` long) by start+end logit,
compared with the no-answer score at the first token ([CLS]); when no-answer wins the answer is
empty, which every parse rule reads as *unanswerable*. It has no prompt text: the grader hands it
(question or nugget text, passage text) pairs, like any :class:`~rubric.llm.base.PairGrader`.
A batch that raises is split so that only the pair that cannot be answered fails.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rubric.llm.base import Answer, OnResults, PairGrader, Result, deliver
from rubric.llm.hf_common import (
    AUTO_BATCH,
    HFSettings,
    device_type,
    isolated,
    load_pretrained,
    load_tokenizer,
    resolve_device,
    resolve_dtype,
    sorted_batches,
)

MAX_ANSWER_TOKENS = 30
TOP_K = 20


class HFQuestionAnswering(PairGrader):
    """Span extraction with a no-answer score."""

    name = "hf-qa"

    def __init__(self, settings: HFSettings):
        import torch
        from transformers import AutoModelForQuestionAnswering

        super().__init__(settings.model)
        self._torch = torch
        self.settings = settings
        self.device = resolve_device(settings.device)
        settings.batch_size = settings.batch_size or AUTO_BATCH[device_type(self.device)]
        self.tokenizer = load_tokenizer(settings.model, "right")
        self.net = load_pretrained(
            AutoModelForQuestionAnswering, settings.model, dtype=resolve_dtype(settings.dtype, self.device)
        )
        self.net.to(self.device)
        self.net.eval()

    @classmethod
    def from_options(cls, model: str, **options: Any) -> HFQuestionAnswering:
        known = {k: v for k, v in options.items() if k in HFSettings.__dataclass_fields__ and v is not None}
        return cls(HFSettings(model=model, **known))

    def options(self) -> dict[str, Any]:
        return {
            "decoding": "span",
            "max_answer_tokens": MAX_ANSWER_TOKENS,
            "max_input_tokens": self.settings.max_input_tokens,
        }

    def grade_pairs(
        self, pairs: Sequence[tuple[str, str]], on_results: OnResults | None = None
    ) -> list[Result]:
        """The extracted answer span (``""`` = no answer) for each (question, context) pair."""
        torch = self._torch
        s = self.settings
        questions = [q for q, _ in pairs]
        contexts = [c for _, c in pairs]
        if not pairs:
            return []
        enc = self.tokenizer(
            questions,
            contexts,
            truncation="only_second",
            max_length=s.max_input_tokens,
            return_offsets_mapping=True,
        )
        results: list[Result | None] = [None] * len(pairs)
        lengths = [len(ids) for ids in enc["input_ids"]]
        names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in enc]

        def run(idx: list[int]) -> list[tuple[int, Result]]:
            batch = self.tokenizer.pad({n: [enc[n][i] for i in idx] for n in names}, return_tensors="pt")
            out = self.net(**{k: v.to(self.device) for k, v in batch.items()})
            starts = out.start_logits.float().cpu()
            ends = out.end_logits.float().cpu()
            return [
                (i, Answer(self._best_span(starts[row], ends[row], enc.sequence_ids(i),
                                           enc["offset_mapping"][i], contexts[i])))
                for row, i in enumerate(idx)
            ]  # fmt: skip

        def cleanup() -> None:
            if device_type(self.device) == "cuda":
                torch.cuda.empty_cache()

        with torch.inference_mode():
            for idx in sorted_batches(lengths, s.batch_size, s.token_budget):
                got = isolated(idx, run, cleanup)
                for i, r in got:
                    results[i] = r
                deliver(on_results, got)
        return results  # type: ignore[return-value]

    @staticmethod
    def _best_span(start: Any, end: Any, seq_ids: list[int | None], offsets: list, context: str) -> str:
        """SQuAD2 decoding: best valid context span unless the no-answer score beats it."""
        n = len(seq_ids)
        in_context = [k for k in range(n) if seq_ids[k] == 1]
        if not in_context:
            return ""
        null = float(start[0] + end[0])
        allowed = set(in_context)
        top_s = [k for k in start[:n].argsort(descending=True).tolist() if k in allowed][:TOP_K]
        top_e = [k for k in end[:n].argsort(descending=True).tolist() if k in allowed][:TOP_K]
        best, span = None, None
        for a in top_s:
            for b in top_e:
                if a <= b < a + MAX_ANSWER_TOKENS:
                    score = float(start[a] + end[b])
                    if best is None or score > best:
                        best, span = score, (a, b)
        if span is None or best is None or null > best:
            return ""
        return context[offsets[span[0]][0] : offsets[span[1]][1]].strip()
