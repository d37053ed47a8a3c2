"""The prompt layer, below every phase that asks a model: prompt files (:mod:`~rubric.prompting.prompts`),
the rules that turn answers into grades (:mod:`~rubric.prompting.parse`, with
:mod:`~rubric.prompting.phrases` and :mod:`~rubric.prompting.answer_key`) and the catalogue of
``rubric prompts`` (:mod:`~rubric.prompting.catalog`).

Bank generation, grading and nugget assignment all load prompts, so the prompts live under them
rather than inside one of them (``bank`` importing ``grading`` would tie two phases together). The
prompt files themselves ship as ``rubric/prompts`` in the wheel, hence another name for this package.
"""
