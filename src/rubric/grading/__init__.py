"""Phase 2: the engine (plan pairs, ask, grade records), the file runner (lock, partial file,
resume), the job that shards, workers and Ray tasks run, nugget assignment, and :func:`rubric.grade`
(:mod:`~rubric.grading.api`). Prompts and answer parsing live one floor down, in
:mod:`rubric.prompting`."""
