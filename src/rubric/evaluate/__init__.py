"""Phase 4: turn grades into system scores (qrels, leaderboards, Cover, nuggets, correlation).

Never imports torch or transformers.
"""
