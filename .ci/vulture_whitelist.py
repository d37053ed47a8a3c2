"""Names vulture (`make lint`) would call unused that are used, by whom: Python, Typer, pydantic,
pytest or a library calling them by name. Anything else vulture reports is dead code: delete it.

Typer commands and callbacks, pytest fixtures and pydantic validators are left out by their
decorators (``ignore_decorators`` in pyproject.toml's ``[tool.vulture]``).
"""

# ruff: noqa
# mypy: ignore-errors
_ = object()

# PEP 562 module attributes (lazy exports of rubric and rubric.evaluate)
__getattr__
__dir__
# __exit__(self, *exc): the context-manager protocol's arguments
exc
# Click's hooks and the function attributes Typer reads (rubric.cli.common, rubric.cli.options)
_.display_type_rich
_.__signature__
_.__annotations__
# io.RawIOBase's protocol (rubric.data.files._Sink)
_.writable
# pydantic: the model configuration, and fields of the file formats kept for their readers
model_config
prompt_style
context_first
check_unanswerable
check_answer_key
# backend classes, imported by name from rubric.llm.registry.BACKENDS
CT2Causal
CT2Seq2Seq
HFCausal
HFSeq2Seq
# attributes transformers reads (rubric.llm.ct2_models, rubric.llm.packaged)
_.tie_word_embeddings
_.hf_quantizer
# a public report's property (rubric.evaluate.meta.MetaReport) for library users
_.topics_used
# pytest: hooks, module markers, and a fixture used only for its effect
pytest_collection_modifyitems
pytestmark
sigint_raises
# tests: attributes the interpreter, http.server, html.parser and tokenizers read
_.__package__
_.__spec__
protocol_version
_.log_message
_.do_POST
daemon_threads
_.handle_starttag
_.pre_tokenizer
_.post_processor
_.decoder
_.model_input_names
_.cls_token
_.sep_token
# tests: generation settings and a class swap that transformers reads (tests/llm/test_hf_backends.py)
_.repetition_penalty
_.suppress_tokens
_.__class__
