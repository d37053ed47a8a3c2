"""``hf-seq2seq``: encoder-decoder models (T5, FLAN-T5) called directly, no pipeline.

The papers graded with FLAN-T5-large through the ``text2text-generation`` pipeline, which
transformers 5 removed; calling ``AutoModelForSeq2SeqLM.generate`` works on 4.4x and 5.x alike.
Decoding is greedy by default (``--num-beams 5`` gives the original tool's beam search); the
options are recorded in every grade's ``llm_options``.

The encoder is most of the work (about 85% with FLAN-T5 and 300-token prompts). For T5 and mT5
it runs through :class:`~rubric.llm.t5_attention.FusedT5Encoder` unless ``attention`` is
``eager``: ``sdpa`` on length-sorted padded batches, ``flex`` on packed (padding-free) rows. The
decoder steps stay transformers' own, fed the encoder states through ``generate(encoder_outputs=)``
so every generation setting (logits processors, beams, stopping) applies unchanged.
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Iterator
from typing import Any

from rubric.errors import UserError
from rubric.llm.hf_common import GenerativeHF, device_type, load_pretrained
from rubric.llm.packing import PackedRow, pack_groups, pack_row, row_capacity, row_width, unpack
from rubric.llm.t5_attention import FusedT5Encoder, supports_fused

# ``auto`` for a T5 encoder, per device type: the fastest path whose grades equal eager's there.
log = logging.getLogger(__name__)
AUTO_ATTENTION = {"cpu": "sdpa", "cuda": "sdpa"}


def default_attention(device: str) -> str:
    """``auto`` for a T5 encoder on ``device``: a measured choice (benchmarks/RESULTS.md).

    CPU: ``sdpa`` (FLAN-T5-small shape, 1 thread, fp32): 1.04-1.10x transformers' SDPA T5 end to
    end, no warm-up; flex needs compiling on CPU (uncompiled it is PyTorch's reference
    implementation, ~10x slower). CUDA: ``sdpa`` too, measured on one H200 (FLAN-T5-large shape,
    bf16, 3,000 prompts of 370 tokens, batches of 256): 479-515 prompts/s, against 390-409 for
    ``flex`` (12 s warm-up compiling its kernel), 479-499 for flex with the encoder compiled (28 s
    warm-up) and 287-314 for transformers' own SDPA. ``flex`` stays a choice for memory: its
    packed rows took 7.9 GiB there, sdpa's padded batches 12.2.
    """
    return AUTO_ATTENTION.get(device_type(device), "sdpa")


# ``GenerationConfig`` fields with which ``generate`` adds a logits processor (or otherwise changes
# greedy decoding's first steps); the direct first steps run only where all are at their defaults
STEP_CHANGING = (
    "min_length", "min_new_tokens", "repetition_penalty", "encoder_repetition_penalty",
    "no_repeat_ngram_size", "encoder_no_repeat_ngram_size", "bad_words_ids", "force_words_ids",
    "forced_bos_token_id", "forced_eos_token_id", "suppress_tokens", "begin_suppress_tokens",
    "forced_decoder_ids", "sequence_bias", "exponential_decay_length_penalty", "renormalize_logits",
    "guidance_scale", "watermarking_config", "remove_invalid_values", "constraints", "low_memory",
)  # fmt: skip


def plain_greedy(generation_config: Any) -> bool:
    """Whether greedy ``generate`` with this config is argmax of the raw logits at every step."""
    from transformers import GenerationConfig

    default = GenerationConfig()
    return (
        all(getattr(generation_config, f, None) == getattr(default, f, None) for f in STEP_CHANGING)
        and getattr(generation_config, "decoder_start_token_id", None) is not None
    )


class HFSeq2Seq(GenerativeHF):
    """A T5-style model; fast rating reads the first decoder steps (see :class:`GenerativeHF`).

    The two steps are two decoder calls on the batch's encoder states (the second with the first's
    key/value cache), not a ``generate`` call: ``generate``'s own work per call (its processors,
    stopping criteria and cache set-up) costs more than the decoder's two steps on a fast device.
    The numbers are the same as ``generate``'s, bit for bit: the first batch of every backend is
    computed both ways and compared, and any difference (a transformers release that decodes
    otherwise, a model whose generation config adds a processor) turns the direct path off.
    """

    name = "hf-seq2seq"
    padding_side = "right"
    encoder: FusedT5Encoder | None = None
    direct_steps: bool | None = None  # None: not yet checked against generate on a first batch

    def _first_steps(self, batch: dict[str, Any], steps: int) -> tuple[Any, Any]:
        if self.direct_steps is False or not plain_greedy(self.net.generation_config):
            return super()._first_steps(batch, steps)
        if self.direct_steps:
            return self._direct_first_steps(batch, steps)
        reference = super()._first_steps(batch, steps)
        try:
            direct = self._direct_first_steps(batch, steps)
            width = reference[0].shape[1]  # generate stops early when every row has ended
            rest = direct[0][:, width:]
            self.direct_steps = bool(
                self._torch.equal(direct[0][:, :width], reference[0])
                and self._torch.equal(direct[1], reference[1])
                and bool((rest == self.tokenizer.pad_token_id).all())
            )
        except Exception:  # noqa: BLE001 - any failure of the direct path: generate serves
            self.direct_steps = False
        return reference

    def _direct_first_steps(self, batch: dict[str, Any], steps: int) -> tuple[Any, Any]:
        """Greedy steps 1 (and 2) as ``generate`` takes them: a row that ended at step one gets
        the pad token at step two."""
        torch, net = self._torch, self.net
        inputs = self._inputs(batch)
        mask = inputs["attention_mask"]
        states = inputs.get("encoder_outputs") or net.get_encoder()(
            input_ids=inputs["input_ids"], attention_mask=mask, return_dict=True
        )
        start = torch.full(
            (mask.shape[0], 1),
            net.generation_config.decoder_start_token_id,
            dtype=torch.long,
            device=mask.device,
        )
        out = net(encoder_outputs=states, attention_mask=mask, decoder_input_ids=start, use_cache=steps > 1)
        scores = out.logits[:, -1].to(dtype=torch.float32)
        first = scores.argmax(-1)
        if steps == 1:
            return first[:, None], scores
        keyword = self._cache_keyword()  # the output carries the cache under the same name
        cache = {keyword: getattr(out, keyword)}
        nxt = net(encoder_outputs=states, attention_mask=mask, decoder_input_ids=first[:, None], **cache)
        second = nxt.logits[:, -1].to(dtype=torch.float32).argmax(-1)
        ended = torch.isin(first, torch.tensor(sorted(self.eos), device=first.device))
        second = torch.where(ended, torch.full_like(second, self.tokenizer.pad_token_id), second)
        return torch.stack([first, second], dim=1), scores

    def _cache_keyword(self) -> str:
        """The decoder's cache argument: ``cache`` in newer transformers, ``past_key_values`` before."""
        import inspect

        return "cache" if "cache" in inspect.signature(self.net.forward).parameters else "past_key_values"

    def _load_model(self) -> Any:
        from transformers import AutoModelForSeq2SeqLM

        return load_pretrained(AutoModelForSeq2SeqLM, self.settings.model, dtype=self.torch_dtype)

    def _new_tokens(self, sequences: Any, batch: dict[str, Any]) -> Any:
        return sequences[:, 1:]  # drop the decoder start token

    # -- attention paths -----------------------------------------------------------------------
    def _setup_attention(self, attention: str) -> str:
        if not supports_fused(self.net):
            if self.settings.compile:
                raise UserError(
                    "{compile_encoder}: applies to T5 / mT5 encoders; "
                    f"{type(self.net).__name__} is not one",
                    "compile_encoder",
                )
            return super()._setup_attention(attention)
        if attention == "auto":
            attention = default_attention(self.device)
        if attention == "eager":
            if self.settings.compile:
                raise UserError(
                    "{compile_encoder}: compiles the sdpa or flex encoder, not eager (transformers' own T5)",
                    "compile_encoder",
                )
            return super()._setup_attention("eager")
        if attention == "flex" and importlib.util.find_spec("torch.nn.attention.flex_attention") is None:
            raise UserError(
                "{attention} flex: this torch has no FlexAttention (torch >= 2.5 has it)", "attention"
            )
        self.encoder = FusedT5Encoder(self.net, attention, compile=self.settings.compile)
        return attention + (" (compiled)" if self.settings.compile else "")

    def kernel_summary(self) -> str:
        line = super().kernel_summary()
        if self.encoder is not None and self.encoder.log.graphs:
            log = self.encoder.log
            line += f"; compile warm-up {log.seconds:.1f} s ({log.graphs} graphs)"
        return line

    def _groups(self, lengths: list[int]) -> Iterator[list[int]]:
        """flex: packed rows of at most ``token_budget`` tokens (default: as many as a padded batch
        of ``batch_size`` longest prompts holds)."""
        if self.encoder is None or self.encoder.kernel != "flex":
            return super()._groups(lengths)
        s = self.settings
        longest = max(lengths, default=1)
        return pack_groups(lengths, row_capacity(s.token_budget or s.batch_size * longest, longest))

    def _tensors(self, rows: list[list[int]]) -> dict[str, Any]:
        if self.encoder is None or self.encoder.kernel != "flex":
            return super()._tensors(rows)
        tokens = sum(len(r) for r in rows)
        row = pack_row(rows, row_width(tokens), self.tokenizer.pad_token_id)
        self.padding.add(tokens, row.width)
        on_device = PackedRow(self._to_device(row.input_ids), self._to_device(row.documents), row.lengths)
        return {"packed": on_device}

    def _fall_back(self, error: Exception) -> None:
        """``auto`` chose flex and it failed (no working Triton or compiler on this machine): warn
        once and go on with ``sdpa``, which gives the same grades. Explicit choices and
        out-of-memory errors are raised."""
        if self.settings.attention != "auto" or isinstance(error, self._torch.cuda.OutOfMemoryError):
            raise error
        first = (str(error).strip().splitlines() or [type(error).__name__])[0][:200]
        log.warning("FlexAttention failed (%s); going on with sdpa", first)
        self.encoder = FusedT5Encoder(self.net, "sdpa", compile=self.settings.compile)
        self.attention = "sdpa (flex failed)"

    def _inputs(self, batch: dict[str, Any]) -> dict[str, Any]:
        """The fused encoder's states handed to ``generate`` as ``encoder_outputs``."""
        if self.encoder is None:
            return batch
        from transformers.modeling_outputs import BaseModelOutput

        if "packed" in batch and self.encoder.kernel != "flex":  # prefetched before a fallback
            ids, mask = unpack(batch["packed"].input_ids[..., None], batch["packed"].lengths)
            batch = {"input_ids": ids[..., 0], "attention_mask": mask}
        if "packed" in batch:
            try:
                hidden, mask = unpack(self.encoder.packed(batch["packed"]), batch["packed"].lengths)
            except Exception as e:  # noqa: BLE001 - any kernel/compiler failure; re-raised unless auto
                self._fall_back(e)
                return self._inputs(batch)
        else:
            hidden, mask = (
                self.encoder.padded(batch["input_ids"], batch["attention_mask"]),
                batch["attention_mask"],
            )
        return {"encoder_outputs": BaseModelOutput(last_hidden_state=hidden), "attention_mask": mask}
