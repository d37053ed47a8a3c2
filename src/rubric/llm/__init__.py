"""LLM backends (one per file) behind one protocol, and the sqlite response cache.

Heavy libraries (torch, transformers, openai) are imported inside the backend modules only, so
importing :mod:`rubric.llm` costs nothing.
"""
