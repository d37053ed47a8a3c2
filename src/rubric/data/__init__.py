"""File formats: pydantic models, streaming JSON lines, TREC qrels and runs, queries, collections,
RAG answer files; and what verify and evaluate both read grades with (label rules, kappa)."""
