"""Phase 3: reports that let a human oversee the grader and refine the test bank.

One report per module (grading, grid, uncovered, spurious, agreement, impact, html); all of them
work on the :class:`~rubric.verify.matrix.GradeMatrix` of one selected kind of grades.
"""
