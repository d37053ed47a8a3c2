"""Turn the files users have (runs, qrels, collections, RAG answers) into the passages file."""
