"""``ct2-seq2seq``: encoder-decoder models (T5, FLAN-T5) run by CTranslate2's ``Translator``.

The model is converted once into the model cache (:mod:`rubric.llm.ct2_models`); prompts are
tokenised as ``hf-seq2seq`` tokenises them and decoded greedily (or with ``--num-beams``) for at
most ``max_new_tokens`` tokens, the end token included, as transformers counts them.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

from rubric.llm.ct2_common import CT2Backend


class CT2Seq2Seq(CT2Backend):
    """A T5-style model in CTranslate2; fast rating as in :class:`~rubric.llm.ct2_common.CT2Backend`."""

    name = "ct2-seq2seq"

    def _load(self, ct2: Any, folder: str, **kwargs: Any) -> Any:
        return ct2.Translator(folder, **kwargs)

    def _decode_batch(
        self, rows: list[list[str]], max_new: int, beams: int, *, first_step: bool
    ) -> list[tuple[list[int], Any]]:
        out = self.engine.translate_batch(
            rows,
            beam_size=beams,
            max_decoding_length=max_new,
            min_decoding_length=0,
            max_input_length=0,  # contexts are already cut to max_input_tokens
            end_token=sorted(self.eos),
            return_end_token=first_step,
            return_logits_vocab=first_step,
        )
        index = self._index
        return [([index[t] for t in r.hypotheses[0]], r.logits[0][0] if first_step else None) for r in out]

    @cached_property
    def _index(self) -> dict[str, int]:
        """Token string -> id in the converted vocabulary (the translator returns strings)."""
        return {t: i for i, t in enumerate(self.vocabulary)}
