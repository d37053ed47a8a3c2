"""Phase 1: test banks (generated, AutoNuggetized, imported, edited)."""
