"""What the CTranslate2 backends share: settings, loading, length-sorted batches, exact fast rating.

CTranslate2 runs transformers models converted once into the model cache
(:mod:`rubric.llm.ct2_models`) with its own C++ kernels: on 2 CPU threads it graded FLAN-T5-base
shaped prompts 1.27x as fast as transformers in float32 and 2.04x in int8 (benchmarks/RESULTS.md). The
prompts are tokenised by the model's own HuggingFace tokenizer exactly as the transformers
backends tokenise them (:class:`~rubric.llm.hf_common.PromptTokens`), handed to CTranslate2 as
token strings of the converted vocabulary, and its output ids are decoded by the same tokenizer,
so both engines see the same tokens and their float32 grades agree (tests/llm/test_ct2.py).

Fast rating is the transformers backends' rule (:class:`~rubric.llm.hf_common.GenerativeHF`):
greedy decoding of at most two tokens, whose first step gives the choice probabilities; a row
that ended there has the answer full greedy generation gives, every other row is generated to the
end. A batch whose call raises is split down to single prompts, so one prompt fails alone.
"""

from __future__ import annotations

import json
import os
import sys
from abc import abstractmethod
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from rubric.errors import UserError
from rubric.llm.base import Answer, ChoiceRater, OnResults, Request, Result, deliver
from rubric.llm.ct2_models import (
    convert,
    converted_model,
    discard_conversion,
    require_ctranslate2,
    resolve_compute_type,
    resolve_ct2_device,
)
from rubric.llm.hf_common import (
    PromptTokens,
    choice_token_ids,
    decoding_options,
    eos_ids,
    generate_the_rest,
    isolated,
    sorted_batches,
)

# measured on CPU (FLAN-T5-base shape, 2 threads, ~365-token prompts, int8 / float32 prompts/s):
# batch 4: 2.00, 8: 2.15 / 1.64, 16: 1.63, 32: 1.36 / 1.28; long prompts in small batches, as for
# the transformers backends (benchmarks/RESULTS.md)
AUTO_BATCH = {"cpu": 8, "cuda": 64}
#: Options of the transformers backends that CTranslate2 has no use for; refused when chosen.
#: The transformers-only options (their key in the backend options: the setting that sets it).
HF_ONLY = {"attention": "attention", "compile": "compile_encoder"}


@dataclass
class CT2Settings:
    """Options of the CTranslate2 backends (the registry's constructor contract, see registry.py)."""

    model: str
    device: str = "auto"
    compute_type: str = "auto"  # float32 | int8 | int8_float16 | float16 | auto (float32 CPU, float16 GPU)
    threads: int = 0  # CPU threads (one replica each, see CT2Backend); 0 = $OMP_NUM_THREADS, else 1
    batch_size: int = 0  # 0 = auto: 8 on CPU, 64 on GPU
    token_budget: int = 0
    max_input_tokens: int = 512
    max_new_tokens: int = 32
    num_beams: int = 1


def default_threads() -> int:
    """``$OMP_NUM_THREADS`` (the thread count every local backend honours), else 1."""
    value = os.environ.get("OMP_NUM_THREADS", "")
    return int(value) if value.isdigit() and int(value) > 0 else 1


def _first_line(e: BaseException) -> str:
    return (str(e).strip().splitlines() or [type(e).__name__])[0][:300]


def read_vocabulary(folder: Path) -> list[str]:
    """The converted model's vocabulary (token strings by id), as CTranslate2 maps them."""
    for name in ("shared_vocabulary.json", "vocabulary.json", "target_vocabulary.json"):
        if (folder / name).exists():
            return list(json.loads((folder / name).read_text(encoding="utf-8")))
    raise UserError(
        f"{{model}}: {folder} holds no CTranslate2 vocabulary; delete the folder to convert again", "model"
    )


def end_ids(source: Path, tokenizer: Any) -> set[int]:
    """The token ids that end generation, as transformers reads them (config, generation config,
    tokenizer), so CTranslate2 stops where ``generate`` stops."""
    from transformers import AutoConfig, GenerationConfig

    try:
        generation: Any = GenerationConfig.from_pretrained(source)
    except OSError:
        generation = None
    return eos_ids(
        SimpleNamespace(config=AutoConfig.from_pretrained(source), generation_config=generation), tokenizer
    )


@contextmanager
def torch_threads_kept() -> Iterator[None]:
    """Loading a CTranslate2 model sets the calling thread's OpenMP thread count to its
    ``intra_threads``, which an imported torch shares: a transformers model in the same process
    (another backend, the benchmark's other rows) then ran on one thread, 1.3 -> 0.78 prompts/s
    measured. Torch's own count is put back; a torch imported later reads its default anew."""
    torch = sys.modules.get("torch")
    before = torch.get_num_threads() if torch is not None else 0
    try:
        yield
    finally:
        if torch is not None and torch.get_num_threads() != before:
            torch.set_num_threads(before)


class CT2Backend(ChoiceRater, PromptTokens):
    """A model run by CTranslate2; the subclasses say which engine (translator or generator)."""

    name = "ct2"

    def __init__(self, settings: CT2Settings):
        ct2 = require_ctranslate2(self.name)
        super().__init__(settings.model)
        self.settings = settings
        self.device, self.device_index = resolve_ct2_device(ct2, settings.device)
        self.compute_type = resolve_compute_type(ct2, settings.compute_type, self.device)
        settings.batch_size = settings.batch_size or AUTO_BATCH[self.device]
        self.threads = settings.threads or default_threads()
        folder, source = converted_model(settings.model, self.compute_type)
        from rubric.llm.hf_common import load_tokenizer

        self.tokenizer = load_tokenizer(str(source))
        self._ids: dict[str, list[int]] = {}
        self._spellings: dict[tuple[str, ...], dict[str, list[int]]] = {}
        self.eos = end_ids(source, self.tokenizer)
        # CPU: one single-threaded replica per thread, each running its own batch (measured faster
        # than one replica on all threads, benchmarks/RESULTS.md); a GPU runs one batch at a time.
        self.replicas = self.threads if self.device == "cpu" else 1
        self.vocabulary, self.engine = self._open(ct2, folder, source)

    def _open(self, ct2: Any, folder: Path, source: Path) -> tuple[list[str], Any]:
        """The converted model's vocabulary and engine. A cached conversion CTranslate2 cannot
        load (truncated by a full disk or a copy: "invalid payload size") is converted again
        once; a second failure is one line naming ``--model``."""
        try:
            return self._load_converted(ct2, folder)
        except (RuntimeError, ValueError, OSError, UserError) as e:
            discard_conversion(folder, self.settings.model, _first_line(e))
            convert(source, folder, self.compute_type, self.settings.model)
        try:
            return self._load_converted(ct2, folder)
        except (RuntimeError, ValueError, OSError, UserError) as e:
            raise UserError(
                f"{{model}} {self.settings.model}: CTranslate2 cannot load its conversion {folder}: "
                f"{_first_line(e)}",
                "model",
            ) from None

    def _load_converted(self, ct2: Any, folder: Path) -> tuple[list[str], Any]:
        vocabulary = read_vocabulary(folder)
        with torch_threads_kept():
            engine = self._load(
                ct2,
                str(folder),
                device=self.device,
                device_index=self.device_index,
                compute_type=self.compute_type,
                intra_threads=max(1, self.threads // self.replicas),
                inter_threads=self.replicas,
            )
        return vocabulary, engine

    @classmethod
    def from_options(cls, model: str, **options: Any) -> CT2Backend:
        """Registry constructor: known :class:`CT2Settings` fields are used; the transformers-only
        options are refused when chosen, others ignored."""
        for key, setting in HF_ONLY.items():
            if options.get(key):
                raise UserError(
                    f"{{{setting}}}: applies to the transformers backends, not to {cls.name}", setting
                )
        if options.get("dtype") not in (None, "auto"):
            raise UserError(
                f"{{dtype}}: {cls.name} takes {{compute_type}} (float32, int8, ...), not {{dtype}}",
                "dtype",
                "compute_type",
            )
        known = {k: v for k, v in options.items() if k in CT2Settings.__dataclass_fields__ and v is not None}
        return cls(CT2Settings(model=model, **known))

    # -- hooks for the concrete backends -------------------------------------------------------
    @abstractmethod
    def _load(self, ct2: Any, folder: str, **kwargs: Any) -> Any:
        """The CTranslate2 engine (``Translator`` or ``Generator``) of the converted folder."""

    @abstractmethod
    def _decode_batch(
        self, rows: list[list[str]], max_new: int, beams: int, *, first_step: bool
    ) -> list[tuple[list[int], Any]]:
        """Greedy or beam decoding of token-string rows: per row, the new token ids (the end
        token included when ``first_step``) and, when ``first_step``, the first step's logits."""

    # -- the contract ----------------------------------------------------------------------------
    def options(self) -> dict[str, Any]:
        return decoding_options(self.settings) | {"compute_type": self.compute_type}

    def kernel_summary(self) -> str:
        at_once = f", {self.replicas} batches at once" if self.replicas > 1 else ""
        return f"CTranslate2 {self.compute_type} on {self.device}, {self.threads} thread(s){at_once}"

    def _each_batch(self, texts: list[str], step: Any, on_results: OnResults | None) -> list[Result]:
        """``step(indices, token rows)`` on every length-sorted batch, ``self.replicas`` batches at
        once (CTranslate2 releases the GIL and runs each on its own replica); a batch that raises
        is split (see :func:`~rubric.llm.hf_common.isolated`). Results reach ``on_results`` in
        batch order, from this thread."""
        s = self.settings
        enc = self._rows(texts)
        vocab = self.vocabulary
        results: list[Result | None] = [None] * len(texts)

        def run(part: list[int]) -> list[tuple[int, Result]]:
            return step(part, [[vocab[t] for t in enc[i]] for i in part])

        def one_batch(idx: list[int]) -> list[tuple[int, Result]]:
            return isolated(idx, run, lambda: None)

        batches = sorted_batches([len(e) for e in enc], s.batch_size, s.token_budget)
        with ThreadPoolExecutor(self.replicas) as pool:
            # a window of one batch per replica: an interrupt waits for those alone
            running = deque(pool.submit(one_batch, b) for b in islice(batches, self.replicas))
            try:
                while running:
                    got = running.popleft().result()
                    following = next(batches, None)
                    if following is not None:
                        running.append(pool.submit(one_batch, following))
                    for i, r in got:
                        results[i] = r
                    deliver(on_results, got)
            except BaseException:
                for future in running:
                    future.cancel()
                raise
        return results  # type: ignore[return-value]

    def _decode(self, ids: list[int]) -> str:
        return self.tokenizer.decode(ids, skip_special_tokens=True)

    def generate(self, requests: Sequence[Request], on_results: OnResults | None = None) -> list[Result]:
        """Answers in request order; batches are length-sorted across all requests given."""
        s = self.settings

        def step(idx: list[int], rows: list[list[str]]) -> list[tuple[int, Result]]:
            out = self._decode_batch(rows, s.max_new_tokens, s.num_beams, first_step=False)
            return [(i, Answer(self._decode(ids))) for i, (ids, _) in zip(idx, out, strict=True)]

        return self._each_batch(self._texts(requests), step, on_results)

    def rate(
        self, requests: Sequence[Request], choices: Sequence[str], on_results: OnResults | None = None
    ) -> list[Result]:
        """Greedy answers, read off the first two decoding steps where generation ends there."""
        s = self.settings
        if s.num_beams != 1:
            return self.generate(requests, on_results)
        key = tuple(choices)
        if key not in self._spellings:
            self._spellings[key] = choice_token_ids(self.tokenizer, choices)
        spellings = self._spellings[key]
        unfinished: list[int] = []
        probs_of: dict[int, dict[str, float]] = {}

        def step(idx: list[int], rows: list[list[str]]) -> list[tuple[int, Result]]:
            done: list[tuple[int, Result]] = []
            out = self._decode_batch(rows, min(2, s.max_new_tokens), 1, first_step=True)
            for i, (ids, logits) in zip(idx, out, strict=True):
                probs_of[i] = choice_probabilities(logits, spellings)
                if any(t in self.eos for t in ids[:2]) or s.max_new_tokens <= 2:
                    done.append((i, Answer(self._decode(ids), probs_of[i])))
                else:
                    unfinished.append(i)
            return done

        results = self._each_batch(self._texts(requests), step, on_results)
        generate_the_rest(self, requests, unfinished, probs_of, results=results, on_results=on_results)
        return results


def choice_probabilities(logits: Any, spellings: dict[str, list[int]]) -> dict[str, float]:
    """Softmax of one step's logits over the vocabulary, read at each choice's spellings (the most
    probable spelling counts, as in the transformers backends)."""
    row = np.asarray(logits, dtype=np.float64)
    top = row.max()
    log_total = top + np.log(np.exp(row - top).sum())
    return {
        c: max([0.0] + [float(np.exp(row[t] - log_total)) for t in ts if t < row.shape[0]])
        for c, ts in spellings.items()
    }
