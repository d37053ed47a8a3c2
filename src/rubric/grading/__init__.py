"""Phase 2: prompts, answer parsing, answer keys and the grading engine."""
