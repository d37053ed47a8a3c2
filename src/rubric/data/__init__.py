"""File formats: pydantic models, streaming JSON lines, TREC qrels and runs, queries, collections."""
