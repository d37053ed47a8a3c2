"""``hf-seq2seq``: encoder-decoder models (T5, FLAN-T5) called directly, no pipeline.

The papers graded with FLAN-T5-large through the ``text2text-generation`` pipeline, which
transformers 5 removed; calling ``AutoModelForSeq2SeqLM.generate`` works on 4.4x and 5.x alike.
Decoding is greedy by default (``--num-beams 5`` gives the original tool's beam search); the
options are recorded in every grade's ``llm_options``.
"""

from __future__ import annotations

from typing import Any

from rubric.llm.hf_common import GenerativeHF, load_pretrained


class HFSeq2Seq(GenerativeHF):
    """A T5-style model; fast rating reads the first decoder steps (see :class:`GenerativeHF`)."""

    name = "hf-seq2seq"
    padding_side = "right"

    def _load_model(self) -> Any:
        from transformers import AutoModelForSeq2SeqLM

        return load_pretrained(AutoModelForSeq2SeqLM, self.settings.model, dtype=self.torch_dtype)

    def _new_tokens(self, sequences: Any, input_len: int) -> Any:
        return sequences[:, 1:]  # drop the decoder start token
