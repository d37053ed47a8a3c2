"""``hf-causal``: decoder-only models (SmolLM2, Llama, Qwen, GPT-2), chat template when available.

Instruction-tuned models answer best when the prompt goes through the chat template their
tokenizer ships (a request's system text becomes the system message); base models without a
template get the raw prompt, system text first. Batches are left-padded so the next-token
logits of every row sit at the last position.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rubric.llm.base import Request
from rubric.llm.hf_common import GenerativeHF, load_pretrained


class HFCausal(GenerativeHF):
    """A causal LM; fast rating reads the first generated tokens (see :class:`GenerativeHF`)."""

    name = "hf-causal"
    padding_side = "left"

    def _load_model(self) -> Any:
        from transformers import AutoModelForCausalLM

        return load_pretrained(AutoModelForCausalLM, self.settings.model, dtype=self.torch_dtype)

    @property
    def chat(self) -> bool:
        return bool(getattr(self.tokenizer, "chat_template", None))

    @property
    def _add_special(self) -> bool:
        return not self.chat  # the chat template already holds the special tokens

    @property
    def supports_system(self) -> bool:  # type: ignore[override]
        """A chat template has a system role; a base model reads the system text as prompt text."""
        return self.chat

    def options(self) -> dict[str, Any]:
        return super().options() | {"chat_template": self.chat}

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

    def _new_tokens(self, sequences: Any, input_len: int) -> Any:
        return sequences[:, input_len:]
