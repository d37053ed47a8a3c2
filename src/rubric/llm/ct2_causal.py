"""``ct2-causal``: decoder-only models (SmolLM2, Llama, Qwen, GPT-2) run by CTranslate2's ``Generator``.

Prompts go through the tokenizer's chat template as in ``hf-causal``
(:class:`~rubric.llm.hf_causal.ChatPrompts`); the prompt tokens initialise the decoder state and
are not part of the result, and ``max_new_tokens`` counts generated tokens, the end token included.
Batches are length-sorted: CTranslate2 feeds the tokens by which a prompt is longer than the
shortest of its batch one step at a time.
"""

from __future__ import annotations

from typing import Any

from rubric.llm.ct2_common import CT2Backend
from rubric.llm.hf_causal import ChatPrompts


class CT2Causal(ChatPrompts, CT2Backend):  # type: ignore[misc,override]
    """A causal LM in CTranslate2; fast rating as in :class:`~rubric.llm.ct2_common.CT2Backend`."""

    name = "ct2-causal"

    def options(self) -> dict[str, Any]:
        return super().options() | {"chat_template": self.chat}

    def _load(self, ct2: Any, folder: str, **kwargs: Any) -> Any:
        return ct2.Generator(folder, **kwargs)

    def _decode_batch(
        self, rows: list[list[str]], max_new: int, beams: int, *, first_step: bool
    ) -> list[tuple[list[int], Any]]:
        out = self.engine.generate_batch(
            rows,
            beam_size=beams,
            max_length=max_new,
            min_length=0,
            include_prompt_in_result=False,
            end_token=sorted(self.eos),
            return_end_token=first_step,
            return_logits_vocab=first_step,
        )
        # In a batch of unequal prompts, the steps that feed a longer prompt's last tokens come
        # first in ``logits`` (CTranslate2 forwards only the shortest prompt at once): the first
        # generated token's logits are those before the last ``len(ids)`` steps.
        results = []
        for r in out:
            ids = list(r.sequences_ids[0])
            results.append((ids, r.logits[0][len(r.logits[0]) - len(ids)] if first_step else None))
        return results
