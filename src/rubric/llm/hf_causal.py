"""``hf-causal``: decoder-only models (SmolLM2, Llama, Qwen, GPT-2), chat template when available.

Instruction-tuned models answer best when the prompt goes through the chat template their
tokenizer ships (a request's system text becomes the system message); base models without a
template get the raw prompt, system text first. Batches are left-padded so the next-token
logits of every row sit at the last position.

Attention is transformers' own (``eager``, ``sdpa``, or ``flex_attention`` where the model has
it; ``auto`` keeps the model's default, SDPA in transformers 5). With greedy decoding, a head that
every prompt of a batch shares (the prompt class's instructions, the chat template's tokens) is
computed once per batch and its cache repeated (:mod:`rubric.llm.shared_head`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rubric.llm.base import Request
from rubric.llm.hf_common import GenerativeHF, load_pretrained
from rubric.llm.shared_head import cache_keyword, common_head, head_cache, head_layout


class ChatPrompts:
    """Prompts through the tokenizer's chat template when it has one (a request's system text
    becomes the system message), else raw; shared by ``hf-causal`` and ``ct2-causal``, so both
    give a model the same input tokens. Needs ``self.tokenizer``."""

    tokenizer: Any

    @property
    def chat(self) -> bool:
        return bool(getattr(self.tokenizer, "chat_template", None))

    @property
    def _add_special(self) -> bool:
        return not self.chat  # the chat template already holds the special tokens

    @property
    def supports_system(self) -> bool:
        """A chat template has a system role; a base model reads the system text as prompt text."""
        return self.chat

    def _texts(self, requests: Sequence[Request]) -> list[str]:
        if not self.chat:
            return [r.text for r in requests]
        texts = []
        for r in requests:
            messages = [{"role": "user", "content": r.user}]
            if r.system:
                messages.insert(0, {"role": "system", "content": r.system})
            texts.append(
                self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
            )
        return texts


class HFCausal(ChatPrompts, GenerativeHF):  # type: ignore[misc,override]
    """A causal LM; fast rating reads the first generated tokens (see :class:`GenerativeHF`)."""

    name = "hf-causal"
    padding_side = "left"
    share_heads = True  # compute a batch's shared prompt head once (off: plain left-padded batches)

    def _load_model(self) -> Any:
        from transformers import AutoModelForCausalLM

        return load_pretrained(AutoModelForCausalLM, self.settings.model, dtype=self.torch_dtype)

    def options(self) -> dict[str, Any]:
        return super().options() | {"chat_template": self.chat}

    def _new_tokens(self, sequences: Any, batch: dict[str, Any]) -> Any:
        return sequences[:, batch["input_ids"].shape[1] :]

    # -- shared prompt head ----------------------------------------------------------------------
    def _tensors(self, rows: list[list[int]]) -> dict[str, Any]:
        """Greedy batches whose rows share a head: ``[head][padding][tail]`` (else left-padded)."""
        head = common_head(rows) if self.share_heads and self.settings.num_beams == 1 else 0
        if not head:
            return super()._tensors(rows)
        ids, mask = head_layout(rows, head, self.tokenizer.pad_token_id)
        tail = ids.shape[1] - head
        self.padding.add(
            head + sum(len(r) - head for r in rows), head + len(rows) * tail, shared=(len(rows) - 1) * head
        )
        return {"input_ids": self._to_device(ids), "attention_mask": self._to_device(mask), "head": head}

    def _inputs(self, batch: dict[str, Any]) -> dict[str, Any]:
        inputs = {"input_ids": batch["input_ids"], "attention_mask": batch["attention_mask"]}
        if batch.get("head"):
            inputs[cache_keyword(self.net)] = head_cache(self.net, batch["input_ids"], batch["head"])
        return inputs
