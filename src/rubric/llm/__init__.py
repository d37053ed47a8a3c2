"""Talking to models: the typed backend contract (:mod:`~rubric.llm.base`), one backend per file,
the one response cache (:mod:`~rubric.llm.cache`), and asking for structured answers
(:mod:`~rubric.llm.ask`, :mod:`~rubric.llm.lists`), shared by every phase that calls a model.

Heavy libraries (torch, transformers, openai) are imported inside the backend modules only, so
importing :mod:`rubric.llm` costs nothing.
"""
