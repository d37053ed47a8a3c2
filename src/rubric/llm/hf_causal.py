"""``hf-causal``: decoder-only models (SmolLM2, Llama, Qwen, GPT-2), chat template when available.

Instruction-tuned models answer best when the prompt goes through the chat template their
tokenizer ships (with the prompt file's ``system`` text if any, see :meth:`HFCausal.with_system`);
base models without a template get the raw prompt. Batches are left-padded so the next-token
logits of every row sit at the last position.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rubric.llm.hf_common import GenerativeHF, load_pretrained


class HFCausal(GenerativeHF):
    """A causal LM; fast rating reads the first generated tokens (see :class:`GenerativeHF`)."""

    name = "hf-causal"
    padding_side = "left"
    system: str | None = None

    def _load_model(self) -> Any:
        from transformers import AutoModelForCausalLM

        return load_pretrained(AutoModelForCausalLM, self.settings.model, dtype=self.torch_dtype)

    @property
    def chat(self) -> bool:
        return bool(getattr(self.tokenizer, "chat_template", None))

    @property
    def _add_special(self) -> bool:
        return not self.chat  # the chat template already holds the special tokens

    def with_system(self, system: str | None) -> HFCausal:
        """Use ``system`` as the system message of the chat template (prompt files may give one)."""
        self.system = system
        return self

    def options(self) -> dict[str, Any]:
        opts = super().options()
        opts["chat_template"] = self.chat
        if self.chat and self.system:
            opts["system"] = self.system
        return opts

    def _texts(self, prompts: Sequence[str]) -> list[str]:
        if not self.chat:
            return list(prompts)
        texts = []
        for p in prompts:
            messages = [{"role": "user", "content": p}]
            if self.system:
                messages.insert(0, {"role": "system", "content": self.system})
            texts.append(
                self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
            )
        return texts

    def _new_tokens(self, sequences: Any, input_len: int) -> Any:
        return sequences[:, input_len:]
