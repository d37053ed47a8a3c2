"""Tiny random HuggingFace models built offline for tests and benchmarks (never committed).

Each builder trains a word-level ``tokenizers`` tokenizer on a few sentences, makes a random model
of a tiny (or given) shape, saves both with ``save_pretrained`` and returns the folder, which every
backend loads by path. ``digit_bias`` scales the output rows of "0".."5" (and end-of-sequence) so
a random model often answers a digit and stops, like a trained grader, yet still produces other
first tokens and continuations: the fast path's early exits and its fallbacks both get exercised.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import random
from pathlib import Path

WORDS = (
    "bees collect nectar from flowers and store it in their honey stomach the hive pass between "
    "them fan with wings until thickens into keeps for years because holds little water slightly "
    "acidic sky is blue light scatters short wavelengths air molecules tides are caused by moon "
    "gravity pulls oceans question answer context rating can be answered based on available choose "
    "one nugget addressed passage relevant yes no unanswerable how why what do does make causes "
    "0 1 2 3 4 5 6 7 8 9 . , ? : ; ! ( ) - sun sea rain cloud snow warm cold"
).split()


#: 20 words: a prompt class's instructions, shared by every prompt that starts with it.
PROMPT_HEAD = (
    "question answer context rating can be answered based on available choose one "
    "nugget addressed passage relevant yes no unanswerable how why"
)


def rating_prompts(words: list[str], n: int, seed: int, head: str = "", longest: int = 40) -> list[str]:
    """``n`` seeded random prompts of up to ``longest`` words ending like a rating prompt."""
    rng = random.Random(seed)
    body = (" ".join(rng.choice(words) for _ in range(rng.randint(3, longest))) for _ in range(n))
    return [f"{head} {b} rating :".strip() for b in body]


def _tokenizer(special: list[str], eos: str, pad: str, unk: str, post: str | None, pair: str | None = None):
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {tok: i for i, tok in enumerate(special)}
    for w in WORDS:
        vocab.setdefault(w, len(vocab))
    tk = Tokenizer(models.WordLevel(vocab=vocab, unk_token=unk))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    if post:
        ids = [(t, vocab[t]) for t in special]
        tk.post_processor = processors.TemplateProcessing(single=post, pair=pair or post, special_tokens=ids)
    from tokenizers import decoders

    tk.decoder = decoders.WordPiece(prefix="##", cleanup=False)
    return PreTrainedTokenizerFast(tokenizer_object=tk, eos_token=eos, pad_token=pad, unk_token=unk)


def _bias(model, tok, start: str, digit_bias: float, eos_bias: float, loud: float = 8.0) -> None:
    """Make "digit after ``start``, then end-of-sequence" likely, without making it certain.

    The final hidden state of these tiny models is dominated by the embedding of the current
    input token, so adding that embedding to an output row makes the row's token likely *after*
    that input token: digit rows get the ``start`` token's embedding, the end-of-sequence row the
    mean digit embedding.
    """
    import torch

    emb = model.get_input_embeddings().weight
    head = model.get_output_embeddings().weight
    digits = [tok.convert_tokens_to_ids(d) for d in "012345"]
    with torch.no_grad():
        # louder embeddings of the start and digit tokens, so they dominate the residual stream
        emb[tok.convert_tokens_to_ids(start)] *= loud
        emb[digits] *= loud
        after_start = emb[tok.convert_tokens_to_ids(start)]
        for i, d in enumerate(digits):
            head[d] += digit_bias * (1 + 0.1 * i) * after_start / after_start.norm() * head[d].norm()
        after_digit = emb[digits].mean(0)
        head[tok.eos_token_id] += eos_bias * after_digit / after_digit.norm() * head[tok.eos_token_id].norm()


def _grader_like(model, tok, seed: int, loud: float = 20.0, words: float = 0.0) -> None:
    """Tied embeddings E with E[start] = u, E[digit i] = 1.5u + v_i, E[eos] = 4 sum(v_i).

    The residual stream of a random T5 is dominated by loud input embeddings, so after the start
    token the digits score highest (which digit: the network's input-dependent noise decides),
    and after a digit d the end-of-sequence row beats d itself. ``words > 0`` (causal models,
    where a prompt's last word is the start) also sets every other word to u plus ``words``
    times its own random direction.
    """
    import torch

    emb = model.get_input_embeddings().weight
    d = emb.shape[1]
    gen = torch.Generator().manual_seed(seed)
    u = torch.randn(d, generator=gen)
    u /= u.norm()
    vs = []
    for _ in range(6):
        v = torch.randn(d, generator=gen)
        v -= (v @ u) * u
        vs.append(v / v.norm())
    scale = loud * d**0.5
    with torch.no_grad():
        if words:
            noise = torch.randn(emb.shape, generator=gen)
            emb.copy_(scale * (u + words * noise / noise.norm(dim=1, keepdim=True)))
        emb[tok.pad_token_id] = scale * u
        for i, digit in enumerate("012345"):
            emb[tok.convert_tokens_to_ids(digit)] = scale * (1.5 * u + vs[i])
        emb[tok.eos_token_id] = scale * 4 * torch.stack(vs).sum(0)


def build_t5(
    folder: Path,
    d_model: int = 32,
    layers: int = 2,
    heads: int = 2,
    d_ff: int = 64,
    vocab_size: int | None = None,
    digit_bias: float = 1.0,
    eos_bias: float = 1.0,
    seed: int = 0,
    d_kv: int | None = None,
    grader_like: bool = False,
) -> Path:
    """A random T5 (gated-gelu like FLAN-T5) with a word-level tokenizer; returns the folder.

    ``grader_like`` shapes the (tied, as transformers 5 always ties T5) embeddings so greedy
    answers are mostly "one digit, then end-of-sequence", like a trained FLAN-T5 grader; otherwise
    ``digit_bias`` / ``eos_bias`` tilt a plain random model (which then tends to repeat a token).
    """
    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    torch.manual_seed(seed)
    tok = _tokenizer(["<pad>", "</s>", "<unk>"], "</s>", "<pad>", "<unk>", "$A </s>", "$A $B </s>")
    tok.model_input_names = ["input_ids", "attention_mask"]
    cfg = T5Config(
        vocab_size=vocab_size or len(tok),
        d_model=d_model,
        d_kv=d_kv or d_model // heads,
        d_ff=d_ff,
        num_layers=layers,
        num_decoder_layers=layers,
        num_heads=heads,
        feed_forward_proj="gated-gelu",
        pad_token_id=0,
        eos_token_id=1,
        decoder_start_token_id=0,
        tie_word_embeddings=False,
    )
    model = T5ForConditionalGeneration(cfg)
    if grader_like:
        _grader_like(model, tok, seed)
    else:
        _bias(model, tok, "<pad>", digit_bias, eos_bias, loud=1.0)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def build_gpt2(
    folder: Path,
    digit_bias: float = 2.0,
    eos_bias: float = 3.0,
    seed: int = 0,
    chat: bool = False,
    n_embd: int = 32,
    n_layer: int = 2,
    n_head: int = 2,
    n_positions: int = 256,
    vocab_size: int | None = None,
    grader_like: bool = False,
) -> Path:
    """A random GPT-2 (optionally with a chat template) and a word-level tokenizer; tiny unless
    a shape is given (the throughput benchmark uses GPT-2 sizes). ``grader_like``: tied
    embeddings shaped so that answers are mostly a digit, then end of sequence (see
    :func:`_grader_like`); otherwise ``digit_bias`` / ``eos_bias`` tilt the random model."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    tok = _tokenizer(["<|endoftext|>", "<unk>"], "<|endoftext|>", "<|endoftext|>", "<unk>", None)
    if chat:
        tok.chat_template = (
            "{% for m in messages %}{{ m['role'] }} : {{ m['content'] }} ; {% endfor %}"
            "{% if add_generation_prompt %}answer : {% endif %}"
        )
    cfg = GPT2Config(
        vocab_size=vocab_size or len(tok),
        n_embd=n_embd,
        n_layer=n_layer,
        n_head=n_head,
        n_positions=n_positions,
        bos_token_id=0,
        eos_token_id=0,
        pad_token_id=0,
        tie_word_embeddings=grader_like,
    )
    model = GPT2LMHeadModel(cfg)
    if grader_like:
        _grader_like(model, tok, seed, words=0.5)
    else:
        _bias(model, tok, ":", digit_bias, eos_bias, loud=1.0)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def build_bert_qa(folder: Path, seed: int = 0) -> Path:
    """A random BERT with a span-extraction head ([CLS] question [SEP] context [SEP])."""
    import torch
    from transformers import BertConfig, BertForQuestionAnswering

    torch.manual_seed(seed)
    tok = _tokenizer(
        ["[PAD]", "[UNK]", "[CLS]", "[SEP]"],
        "[SEP]",
        "[PAD]",
        "[UNK]",
        "[CLS] $A [SEP]",
        "[CLS] $A:0 [SEP]:0 $B:1 [SEP]:1",
    )
    tok.cls_token = "[CLS]"
    tok.sep_token = "[SEP]"
    cfg = BertConfig(
        vocab_size=len(tok),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=256,
        pad_token_id=0,
    )
    BertForQuestionAnswering(cfg).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def big_pool(folder: Path) -> tuple[Path, Path]:
    """40 queries x 6 passages and a bank of 2 questions each: long enough to kill mid-run."""
    words = WORDS
    with gzip.open(folder / "big.jsonl.gz", "wt") as f:
        for q in range(40):
            ps = [
                {
                    "paragraph_id": f"d{q}_{k}",
                    "text": " ".join(words[(q * 7 + k * 3 + j) % len(words)] for j in range(30)),
                }
                for k in range(6)
            ]
            f.write(json.dumps([f"q{q}", ps]) + "\n")
    with open(folder / "bank.jsonl", "w") as f:
        for q in range(40):
            items = []
            for k in range(2):
                text = " ".join(words[(q + k * 5 + j) % len(words)] for j in range(5))
                item_id = f"q{q}/{hashlib.md5(text.encode()).hexdigest()}"
                items.append({"query_id": f"q{q}", "question_id": item_id, "question_text": text})
            f.write(json.dumps({"query_id": f"q{q}", "query_text": f"query {q}", "items": items}) + "\n")
    return folder / "big.jsonl.gz", folder / "bank.jsonl"


def build_llama(
    folder: Path, seed: int = 0, chat: bool = True, digit_bias: float = 2.0, eos_bias: float = 3.0
) -> Path:
    """A random Llama (the SmolLM2 family: RMSNorm, rotary positions, grouped-query attention)
    with a word-level tokenizer and, by default, a chat template; ``digit_bias`` / ``eos_bias``
    tilt it towards "digit, then end" as :func:`build_gpt2` does."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    tok = _tokenizer(["<|endoftext|>", "<unk>", "<s>"], "<|endoftext|>", "<|endoftext|>", "<unk>", None)
    tok.bos_token = "<s>"
    if chat:
        tok.chat_template = (
            "{% for m in messages %}{{ m['role'] }} : {{ m['content'] }} ; {% endfor %}"
            "{% if add_generation_prompt %}answer : {% endif %}"
        )
    cfg = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        bos_token_id=2,
        eos_token_id=0,
        pad_token_id=0,
        tie_word_embeddings=False,
    )
    model = LlamaForCausalLM(cfg)
    _bias(model, tok, ":", digit_bias, eos_bias, loud=1.0)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def sentencepiece_tokenizer(texts: list[str], vocab_size: int = 400, byte_level: bool = False):
    """A tokenizer trained here on ``texts``, built as the original's models' tokenizers are:
    T5's (a unigram model over "▁"-marked words, ``</s>`` appended; decoding joins tokens, so two
    token lists decoded together start a new word at the seam) or, ``byte_level``, GPT-2's (a
    byte-level BPE, no special tokens added, decoding exact)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    if byte_level:
        tk = Tokenizer(models.BPE())
        tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tk.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(
            vocab_size=vocab_size,
            special_tokens=["<|endoftext|>"],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        )
        tk.train_from_iterator(texts, trainer)
        return PreTrainedTokenizerFast(tokenizer_object=tk, eos_token="<|endoftext|>")
    tk = Tokenizer(models.Unigram())
    tk.pre_tokenizer = pre_tokenizers.Metaspace()
    tk.decoder = decoders.Metaspace()
    trainer = trainers.UnigramTrainer(
        vocab_size=vocab_size, special_tokens=["<pad>", "</s>", "<unk>"], unk_token="<unk>"
    )
    tk.train_from_iterator(texts, trainer)
    tk.post_processor = processors.TemplateProcessing(
        single="$A </s>", pair="$A $B </s>", special_tokens=[("</s>", tk.token_to_id("</s>"))]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tk, eos_token="</s>", pad_token="<pad>", unk_token="<unk>"
    )


def build_t5_sentencepiece(folder: Path, texts: list[str], vocab_size: int = 400) -> Path:
    """A random T5 (:func:`build_t5`) with a T5-like tokenizer trained on ``texts``
    (:func:`sentencepiece_tokenizer`); returns the folder."""
    tok = sentencepiece_tokenizer(texts, vocab_size)
    tok.model_input_names = ["input_ids", "attention_mask"]
    build_t5(folder, vocab_size=len(tok))
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        (folder / name).unlink(missing_ok=True)
    tok.save_pretrained(folder)
    return folder


def gpt2_like_tokenizer(folder: Path) -> Path:
    """A byte-level BPE trained here on the shipped prompts and the bundled example's passages, so
    that it spends about as many tokens on them as GPT-2 does (148 on a self-rating prompt where
    GPT-2 takes about 160); saved in ``folder`` (``tokenizer.json``)."""
    import tomllib

    root = Path(__file__).resolve().parents[2]
    texts = [" ".join(WORDS)]
    for path in sorted((root / "prompts").glob("*.toml")):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        texts += [data["template"], data.get("system") or ""]
    texts += (root / "examples" / "tiny" / "collection.tsv").read_text(encoding="utf-8").splitlines()
    sentencepiece_tokenizer(texts, 3000, byte_level=True).save_pretrained(folder)
    return folder
