"""What the local HuggingFace backends share: device/dtype choice, loading, length-sorted batches.

Throughput on these models comes from three things: sorting prompts by token length so batches
carry little padding, batching across passages and queries (the grader hands a backend thousands
of prompts at once), and ``torch.inference_mode``. bf16 is the default on GPU; CPUs run fp32 (bf16
matmuls are slow on most CPUs and change answers). The attention path (``attention``, ``compile``)
is chosen by each backend: the T5 encoder has its own fused paths (:mod:`rubric.llm.t5_attention`),
causal models use transformers' own and share prompt heads (:mod:`rubric.llm.shared_head`).
"""

from __future__ import annotations

import os
from abc import abstractmethod
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rubric.errors import UserError, one_of
from rubric.llm.base import (
    Answer,
    ChoiceRater,
    OnResults,
    Request,
    Result,
    TokenCounter,
    deliver,
    failure_of,
)
from rubric.llm.packaged import resolve_model
from rubric.llm.packing import PaddingTally
from rubric.llm.prefetch import prefetch

DEVICES = ("auto", "cpu", "cuda")
AUTO_BATCH = {"cpu": 8, "cuda": 64}  # measured: on CPU, batches of 32 long prompts run slower than 8
AUTO_PAD_MULTIPLE = {"cpu": 1, "cuda": 8}
MEMO_SIZE = 65536  # token ids remembered between fitting prompts and batching them
DTYPES = ("auto", "float32", "bfloat16", "float16")
ATTENTIONS = ("auto", "eager", "sdpa", "flex")


@dataclass
class HFSettings:
    """Options every HF backend takes (the registry's constructor contract, see registry.py)."""

    model: str
    device: str = "auto"
    dtype: str = "auto"
    batch_size: int = 0  # 0 = auto: small batches on CPU (cache-friendly), large on GPU
    token_budget: int = 0  # > 0: batches hold at most this many (padded) input tokens
    max_input_tokens: int = 512
    max_new_tokens: int = 32
    num_beams: int = 1
    pad_multiple: int = 0  # 0 = auto: 8 on GPU (tensor-core friendly shapes), 1 on CPU (no extra work)
    attention: str = "auto"  # eager | sdpa | flex | auto (the fastest exact path on the device)
    compile: bool = False  # torch.compile the T5 encoder (the calls that compile are the warm-up)


def decoding_options(settings: Any) -> dict[str, Any]:
    """The decoding settings that change a local generative model's answers (``llm_options``)."""
    return {
        "decoding": "greedy" if settings.num_beams == 1 else "beam",
        "num_beams": settings.num_beams,
        "max_new_tokens": settings.max_new_tokens,
        "max_input_tokens": settings.max_input_tokens,
    }


def device_type(device: str) -> str:
    """``cuda:1`` -> ``cuda``: per-type defaults (batch size, dtype) ignore the GPU index."""
    return device.split(":", 1)[0]


def resolve_device(device: str) -> str:
    """``auto`` -> cuda when available, else cpu; ``cuda`` or ``cuda:N`` without that GPU is a user error.

    ``cuda:N`` names one GPU, so one machine can run one grading worker per GPU (``--devices``).
    """
    import torch

    kind, _, index = device.partition(":")
    if kind not in DEVICES or (index and (kind != "cuda" or not index.isdigit())):
        raise UserError(
            f"{{device}}: expected one of {', '.join(DEVICES)} or cuda:N, got {device!r}", "device"
        )
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if kind == "cuda" and not torch.cuda.is_available():
        raise UserError(f"{{device}} {device}: no CUDA device is available (use {{device}} cpu)", "device")
    if index and int(index) >= torch.cuda.device_count():
        raise UserError(
            f"{{device}} {device}: this machine has {torch.cuda.device_count()} CUDA device(s)", "device"
        )
    return device


def resolve_dtype(dtype: str, device: str) -> Any:
    """``auto`` -> bfloat16 on GPU, float32 on CPU."""
    import torch

    one_of("dtype", dtype, DTYPES)
    if dtype == "auto":
        dtype = "bfloat16" if device_type(device) == "cuda" else "float32"
    return getattr(torch, dtype)


# A folder is a saved model or tokenizer when it holds one of these (save_pretrained writes them).
MODEL_FOLDER_MARKERS = ("config.json", "tokenizer_config.json", "tokenizer.json")


def load_pretrained(auto_class: Any, name: str, **kwargs: Any) -> Any:
    """``auto_class.from_pretrained`` with a one-line error naming ``--model`` when it fails.

    transformers 5 calls the dtype argument ``dtype``; 4.x before 4.56 only knows ``torch_dtype``.
    """
    path = resolve_model(name)
    folder = Path(path)
    if folder.is_dir() and not any((folder / f).exists() for f in MODEL_FOLDER_MARKERS):
        raise UserError(
            f"{{model}} {name}: {folder} is a folder but holds no model (no config.json)", "model"
        )
    import transformers

    if "dtype" in kwargs and int(transformers.__version__.split(".")[0]) < 5:
        kwargs["torch_dtype"] = kwargs.pop("dtype")
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # our own bar counts pairs; weight loading is quick
    try:  # a local folder or a model in the Hugging Face cache: no network at all
        return auto_class.from_pretrained(path, local_files_only=True, **kwargs)
    except (OSError, ValueError, KeyError) as e:
        if hub_offline() or folder.exists() or name.startswith(("/", ".", "~")):  # not a hub id
            raise _load_error(name, e) from None
    check_hub_reachable(name)  # unreachable: one line now, not a minute of retries
    try:
        return auto_class.from_pretrained(path, **kwargs)
    except (OSError, ValueError, KeyError) as e:
        raise _load_error(name, e) from None


def _load_error(name: str, e: Exception) -> UserError:
    first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    hint = " (offline: HF_HUB_OFFLINE is set)" if hub_offline() else ""
    return UserError(f"{{model}} {name}: cannot load it{hint}: {first}", "model")


def hub_offline() -> bool:
    """Whether HF_HUB_OFFLINE asks for offline mode, read as huggingface_hub reads it: 1, ON,
    YES or TRUE (any case); 0, an empty value or anything else is online."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in {"1", "ON", "YES", "TRUE"}


def check_hub_reachable(name: str, timeout: float = 3.0) -> None:
    """A model that is not on this machine must be downloaded: when the hub's host does not
    answer within ``timeout`` seconds, say so at once (huggingface_hub would retry for about a
    minute before failing). Behind a proxy the check is left to the download itself."""
    if any(os.environ.get(v) for v in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")):
        return
    import socket
    from urllib.parse import urlparse

    endpoint = urlparse(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    host, port = (
        endpoint.hostname or "huggingface.co",
        endpoint.port or (443 if endpoint.scheme == "https" else 80),
    )
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as e:
        raise UserError(
            f"{{model}} {name}: not on this machine (no such folder, not in the Hugging Face cache) and "
            f"{host} cannot be reached to download it ({e.strerror or type(e).__name__}); download it "
            "where there is a network, or give a local folder",
            "model",
        ) from None


def load_tokenizer(name: str, padding_side: str = "right") -> Any:
    from transformers import AutoTokenizer

    tok = load_pretrained(AutoTokenizer, name)
    tok.padding_side = padding_side
    if tok.pad_token is None:
        if tok.eos_token is None:
            raise UserError(f"{{model}} {name}: the tokenizer has neither a pad nor an eos token", "model")
        tok.pad_token = tok.eos_token
    return tok


def sorted_batches(lengths: Sequence[int], batch_size: int, token_budget: int = 0) -> Iterator[list[int]]:
    """Indices grouped into batches of similar length, longest first.

    Longest first makes an out-of-memory error show up in the first batch, not after an hour. A
    batch is closed when it has ``batch_size`` prompts or, with a ``token_budget``, when one more
    prompt would make ``rows * longest`` exceed it (a batch always gets at least one prompt).
    """
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    batch: list[int] = []
    for i in order:
        longest = lengths[batch[0]] if batch else lengths[i]
        full = len(batch) >= batch_size or (token_budget > 0 and (len(batch) + 1) * longest > token_budget)
        if batch and full:
            yield batch
            batch = []
        batch.append(i)
    if batch:
        yield batch


def use_attention(net: Any, implementation: str) -> None:
    """Switch a loaded model to one of transformers' attention implementations."""
    setter = getattr(net, "set_attn_implementation", None)
    if setter is None:
        raise UserError(
            "{attention}: this transformers cannot switch attention; transformers >= 5 can", "attention"
        )
    try:
        setter(implementation)
    except (ValueError, ImportError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise UserError(
            f"{{attention}}: {type(net).__name__} cannot use {implementation}: {first}", "attention"
        ) from None


def eos_ids(model: Any, tokenizer: Any) -> set[int]:
    """Token ids that end generation (generation config may list several)."""
    ids: set[int] = set()
    for source in (getattr(model, "generation_config", None), model.config):
        value = getattr(source, "eos_token_id", None) if source is not None else None
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, (list, tuple)):
            ids.update(int(v) for v in value)
    if tokenizer.eos_token_id is not None:
        ids.add(int(tokenizer.eos_token_id))
    return ids


def choice_token_ids(tokenizer: Any, choices: Sequence[str]) -> dict[str, list[int]]:
    """Token ids of each choice's single-token spellings, read once per prompt parser.

    A choice may be spelled with or without a leading word-boundary marker (sentencepiece "▁4",
    BPE "Ġ4"); the most probable spelling counts (see :meth:`GenerativeHF.rate`). Looked up once,
    not per answer: ``get_vocab`` builds a dict of the whole vocabulary (~13 ms for 32k tokens
    here), which per row would cap a GPU at a few hundred prompts/s.
    """
    vocab = tokenizer.get_vocab()
    return {c: [vocab[sp] for sp in (c, "▁" + c, "Ġ" + c, " " + c) if sp in vocab] for c in choices}


class PromptTokens(TokenCounter):
    """Token ids of prompts as a HuggingFace tokenizer gives them, remembered between context
    fitting and batching, and cut to ``max_input_tokens`` as the tokenizer cuts; shared by the
    transformers and the CTranslate2 backends, so both see exactly the same input tokens.

    Needs ``self.tokenizer``, ``self.settings.max_input_tokens`` and ``self._ids`` (a dict).
    """

    tokenizer: Any
    settings: Any
    _ids: dict[str, list[int]]

    def _texts(self, requests: Sequence[Request]) -> list[str]:
        """The model input text of each request (the causal backends apply a chat template)."""
        return [r.text for r in requests]

    def token_lengths(self, requests: Sequence[Request]) -> list[int]:
        """Input length in tokens of each request as the model sees it (special tokens included)."""
        if not requests:
            return []
        return [len(ids) for ids in self._encode(self._texts(requests))]

    def _encode(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids of model input texts, untruncated; remembered, so that the prompts context
        fitting measured are not tokenised again for batching."""
        found = {t: self._ids[t] for t in texts if t in self._ids}
        todo = [t for t in dict.fromkeys(texts) if t not in found]
        if todo:
            enc = self.tokenizer(todo, add_special_tokens=self._add_special)["input_ids"]
            found.update(zip(todo, enc, strict=True))
            if len(self._ids) + len(todo) > MEMO_SIZE:
                self._ids.clear()
            self._ids.update(zip(todo, enc, strict=True))
        return [found[t] for t in texts]

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        """Character span of each token of ``text`` (used to cut a context at a token boundary)."""
        enc = self.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        return [tuple(o) for o in enc["offset_mapping"]]

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def decode(self, ids: Sequence[int]) -> str:
        return str(self.tokenizer.decode(list(ids)))

    @property
    def special_tokens(self) -> int:
        return int(self.tokenizer.num_special_tokens_to_add()) if self._add_special else 0

    @property
    def max_input_tokens(self) -> int:
        return self.settings.max_input_tokens

    @property
    def _add_special(self) -> bool:
        return True

    def _rows(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids of each model input, cut to ``max_input_tokens`` as the tokenizer cuts."""
        s = self.settings
        enc = self._encode(texts)
        long = [i for i, ids in enumerate(enc) if len(ids) > s.max_input_tokens]
        if long:  # rare: context fitting makes prompts fit; cut the rest as the tokenizer does
            cut = self.tokenizer(
                [texts[i] for i in long],
                add_special_tokens=self._add_special,
                truncation=True,
                max_length=s.max_input_tokens,
            )["input_ids"]
            enc = list(enc)
            for i, ids in zip(long, cut, strict=True):
                enc[i] = ids
        return enc


class GenerativeHF(ChoiceRater, PromptTokens):
    """Greedy/beam generation and exact fast rating, shared by the seq2seq and causal backends.

    Fast rating runs greedy generation for at most two new tokens on a length-sorted batch. A row
    whose generation already ended (end-of-sequence at step one or two) has exactly the answer full
    greedy generation gives, because it *is* the first two steps of that generation on the same
    batch; every other row (the top token was not a one-token answer, or the model kept talking:
    "4" followed by "5" would parse differently) is generated to the end. The first step's
    distribution gives the choice probabilities for an expected grade.

    A batch whose model call raises (out of memory, a CUDA error) is split in halves and run
    again, down to single prompts, so a prompt that cannot be answered fails alone and every
    other prompt of its batch is answered. Results are reported per batch (``on_results``).
    """

    name = "hf"
    padding_side = "right"

    def __init__(self, settings: HFSettings):
        import torch

        super().__init__(settings.model)
        self.settings = settings
        self.device = resolve_device(settings.device)
        one_of("attention", settings.attention, ATTENTIONS)
        settings.batch_size = settings.batch_size or AUTO_BATCH[device_type(self.device)]
        settings.pad_multiple = settings.pad_multiple or AUTO_PAD_MULTIPLE[device_type(self.device)]
        self._ids: dict[str, list[int]] = {}
        self._spellings: dict[tuple[str, ...], dict[str, list[int]]] = {}
        self.torch_dtype = resolve_dtype(settings.dtype, self.device)
        self.tokenizer = load_tokenizer(settings.model, self.padding_side)
        if self.device.startswith("cuda:"):
            torch.cuda.set_device(self.device)  # cuda:N: kernels and buffers on N, not on GPU 0
        self.net = self._load_model()
        self.net.to(self.device)
        self.net.eval()
        self.eos = eos_ids(self.net, self.tokenizer)
        self.padding = PaddingTally()  # input slots given to the model, and how many were padding
        self._torch = torch
        self.attention = self._setup_attention(settings.attention)

    @classmethod
    def from_options(cls, model: str, **options: Any) -> GenerativeHF:
        """Registry constructor: known :class:`HFSettings` fields are used, others ignored (the
        CTranslate2-only options are refused when chosen)."""
        for key in ("compute_type", "threads"):
            if options.get(key):
                raise UserError(f"{{{key}}}: applies to the ct2 backends, not to {cls.name}", key)
        known = {k: v for k, v in options.items() if k in HFSettings.__dataclass_fields__ and v is not None}
        return cls(HFSettings(model=model, **known))

    # -- hooks for the concrete backends -------------------------------------------------------
    @abstractmethod
    def _load_model(self) -> Any:
        """The model, loaded with the right Auto class and dtype."""

    @abstractmethod
    def _new_tokens(self, sequences: Any, batch: dict[str, Any]) -> Any:
        """The generated part of ``generate``'s output sequences for ``batch``."""

    def _setup_attention(self, attention: str) -> str:
        """Select the attention path; returns its name as reported. The base uses transformers'
        own implementations (``auto``: the model's default, SDPA where it has one)."""
        if self.settings.compile:
            raise UserError(
                f"{{compile_encoder}}: applies to T5 encoders (hf-seq2seq), not to {self.name}",
                "compile_encoder",
            )
        if attention == "auto":
            return str(self.net.config._attn_implementation)
        if attention == "flex" and not getattr(self.net, "_supports_flex_attn", False):
            raise UserError(
                f"{{attention}} flex: {type(self.net).__name__} has no FlexAttention path "
                "(use sdpa or eager)",
                "attention",
            )
        use_attention(self.net, "flex_attention" if attention == "flex" else attention)
        return attention

    def _groups(self, lengths: list[int]) -> Iterator[list[int]]:
        """Prompt indices of each batch: length-sorted, padded batches (see :func:`sorted_batches`)."""
        return sorted_batches(lengths, self.settings.batch_size, self.settings.token_budget)

    def _inputs(self, batch: dict[str, Any]) -> dict[str, Any]:
        """``generate``'s keyword arguments for a batch built by :meth:`_tensors`."""
        return batch

    def kernel_summary(self) -> str:
        """One line for the run summary: attention path, padding share, compile warm-up."""
        pad = self.padding
        line = f"attention {self.attention}; padding {100 * pad.ratio:.1f}% of {pad.slots:,} input slots"
        if pad.shared:
            line += f"; {pad.shared:,} prompt-head tokens computed once per batch instead of per prompt"
        return line

    # -- the contract ----------------------------------------------------------------------------
    def options(self) -> dict[str, Any]:
        return decoding_options(self.settings)

    def _batches(self, texts: list[str]) -> Iterator[tuple[list[int], dict[str, Any]]]:
        """(prompt indices, model inputs on the device), length-sorted; built one batch ahead in a
        thread (see :mod:`rubric.llm.prefetch`) so host work overlaps with the model."""
        enc = self._rows(texts)
        return prefetch(self._stream(enc, self._groups([len(e) for e in enc])))

    def _stream(self, enc: list[list[int]], groups: Iterator[list[int]]) -> Iterator[tuple[list[int], Any]]:
        """The batches, built in the prefetch thread. CUDA's current device is per thread (device 0
        in a new one), so the thread selects ours: pinned buffers and copies stay on ``cuda:N``."""
        if device_type(self.device) == "cuda":
            with self._torch.cuda.device(self.device):
                for idx in groups:
                    yield idx, self._tensors([enc[i] for i in idx])
        else:
            for idx in groups:
                yield idx, self._tensors([enc[i] for i in idx])

    def _tensors(self, rows: list[list[int]]) -> dict[str, Any]:
        """Padded ``input_ids`` and ``attention_mask`` on the device.

        Rows are padded to the longest one rounded up to ``pad_multiple`` (never past
        ``max_input_tokens`` unless a row is longer), on the tokenizer's padding side; the padded
        positions are masked, so answers do not depend on it. On CUDA the host tensors are pinned
        and copied without blocking, so the copy overlaps with the model's work on earlier batches.
        """
        torch = self._torch
        s = self.settings
        longest = max(len(r) for r in rows)
        width = max(longest, min(-(-longest // s.pad_multiple) * s.pad_multiple, s.max_input_tokens))
        ids = torch.full((len(rows), width), self.tokenizer.pad_token_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        left = self.tokenizer.padding_side == "left"
        for r, row in enumerate(rows):
            span = slice(width - len(row), width) if left else slice(0, len(row))
            ids[r, span] = torch.tensor(row, dtype=torch.long)
            mask[r, span] = 1
        self.padding.add(sum(len(r) for r in rows), len(rows) * width)
        return {"input_ids": self._to_device(ids), "attention_mask": self._to_device(mask)}

    def _to_device(self, tensor: Any) -> Any:
        """On CUDA: a pinned copy sent without blocking (overlaps with the model's work)."""
        if device_type(self.device) == "cuda":
            return tensor.pin_memory().to(self.device, non_blocking=True)
        return tensor

    def _run(self, batch: dict[str, Any], max_new: int, beams: int, *, scores: bool = False) -> Any:
        return self.net.generate(
            **self._inputs(batch),
            max_new_tokens=max_new,
            num_beams=beams,
            do_sample=False,
            output_scores=scores,
            return_dict_in_generate=True,
            pad_token_id=self.tokenizer.pad_token_id,
        )

    def _first_steps(self, batch: dict[str, Any], steps: int) -> tuple[Any, Any]:
        """The first ``steps`` (1 or 2) greedy tokens of every row and the first step's scores:
        ``generate`` for the base; a backend may compute the same numbers in fewer calls."""
        out = self._run(batch, steps, 1, scores=True)
        return self._new_tokens(out.sequences, batch), out.scores[0]

    def _decode(self, tokens: Any) -> str:
        return self.tokenizer.decode(tokens, skip_special_tokens=True)

    def _each_batch(self, texts: list[str], step: Step, on_results: OnResults | None) -> list[Result]:
        """Run ``step(indices, batch)`` on every length-sorted batch, in inference mode; a batch
        that raises is split (see :func:`isolated`) and its rows' tensors are built again."""
        results: list[Result | None] = [None] * len(texts)

        def cleanup() -> None:
            if device_type(self.device) == "cuda":
                self._torch.cuda.empty_cache()

        with self._torch.inference_mode():
            for idx, batch in self._batches(texts):

                def run(part: list[int], idx: list[int] = idx, batch: dict[str, Any] = batch) -> Any:
                    inputs = batch if part is idx else self._tensors(self._rows([texts[i] for i in part]))
                    return step(part, inputs)

                got = isolated(idx, run, cleanup)
                for i, r in got:
                    results[i] = r
                deliver(on_results, got)
        return results  # type: ignore[return-value]

    def generate(self, requests: Sequence[Request], on_results: OnResults | None = None) -> list[Result]:
        """Answers in request order; batches are length-sorted across all requests given."""
        s = self.settings

        def step(idx: list[int], batch: dict[str, Any]) -> list[tuple[int, Result]]:
            out = self._run(batch, s.max_new_tokens, s.num_beams)
            new = self._new_tokens(out.sequences, batch).cpu()
            return [(i, Answer(self._decode(new[row]))) for row, i in enumerate(idx)]

        return self._each_batch(self._texts(requests), step, on_results)

    def rate(
        self, requests: Sequence[Request], choices: Sequence[str], on_results: OnResults | None = None
    ) -> list[Result]:
        """Greedy answers, read off the first two decoding steps where generation ends there."""
        s = self.settings
        if s.num_beams != 1:  # beam search: no exact one-step shortcut
            return self.generate(requests, on_results)
        torch = self._torch
        unfinished: list[int] = []
        probs_of: dict[int, dict[str, float]] = {}
        key = tuple(choices)
        if key not in self._spellings:
            self._spellings[key] = choice_token_ids(self.tokenizer, choices)
        spellings = self._spellings[key]

        def step(idx: list[int], batch: dict[str, Any]) -> list[tuple[int, Result]]:
            tokens, scores = self._first_steps(batch, min(2, s.max_new_tokens))
            new = tokens.cpu()
            # only the choices' columns of the first step's distribution leave the device
            cols = sorted({t for ts in spellings.values() for t in ts if t < scores.shape[-1]})
            first = torch.softmax(scores.float(), dim=-1)[:, cols].cpu().tolist()
            where = {t: j for j, t in enumerate(cols)}
            done: list[tuple[int, Result]] = []
            for row, i in enumerate(idx):
                probs_of[i] = {
                    c: max([0.0] + [first[row][where[t]] for t in ts if t in where])
                    for c, ts in spellings.items()
                }
                ended = any(t in self.eos for t in new[row].tolist()[:2])
                if ended or s.max_new_tokens <= 2:
                    done.append((i, Answer(self._decode(new[row]), probs_of[i])))
                else:
                    unfinished.append(i)
            return done

        results = self._each_batch(self._texts(requests), step, on_results)
        generate_the_rest(self, requests, unfinished, probs_of, results=results, on_results=on_results)
        return results


Step = Callable[[list[int], dict[str, Any]], list[tuple[int, Result]]]


def isolated(
    idx: list[int], run: Callable[[list[int]], list[tuple[int, Result]]], cleanup: Callable[[], None]
) -> list[tuple[int, Result]]:
    """``run(idx)``; when the model call raises (out of memory, a CUDA or shape error, a token id
    outside the model's vocabulary), the rows are run again in two halves, down to single rows,
    so one row that cannot be answered fails alone (a :class:`~rubric.llm.base.Failure` with the
    error) and every other row of its batch is answered. ``cleanup`` runs after each error
    (it frees cached GPU memory)."""
    try:
        return run(idx)
    except (RuntimeError, ValueError, IndexError) as e:
        cleanup()
        if len(idx) == 1:
            return [(idx[0], failure_of(e))]
        half = len(idx) // 2
        return isolated(idx[:half], run, cleanup) + isolated(idx[half:], run, cleanup)


def generate_the_rest(
    backend: ChoiceRater,
    requests: Sequence[Request],
    unfinished: list[int],
    probs_of: dict[int, dict[str, float]],
    *,
    results: list[Result],
    on_results: OnResults | None,
) -> None:
    """Fast rating's fallback: generate the ``unfinished`` requests (whose answer did not end in
    the first steps) to the end, keep their first-step choice probabilities, put them into
    ``results`` and hand them to ``on_results`` as they arrive; counted as fallbacks."""
    if not unfinished:
        return
    backend.stats.fallbacks += len(unfinished)

    def finish(batch: Sequence[tuple[int, Result]]) -> None:
        got = [(unfinished[j], _with_probs(r, probs_of[unfinished[j]])) for j, r in batch]
        for i, r in got:
            results[i] = r
        deliver(on_results, got)

    backend.generate([requests[i] for i in unfinished], finish)


def _with_probs(result: Result, probs: dict[str, float]) -> Result:
    return Answer(result.text, probs) if isinstance(result, Answer) else result
