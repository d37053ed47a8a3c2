"""Phase 2: prompts, answer parsing and answer keys; the engine (plan and ask), grade records, the
file runner (lock, partial file, resume), the job that shards, workers and Ray tasks run, and
:func:`rubric.grade` (:mod:`~rubric.grading.api`)."""
