"""rubric-workbench: evaluate retrieval, generation and RAG systems with LLM-graded rubrics."""

__version__ = "0.1.0"
