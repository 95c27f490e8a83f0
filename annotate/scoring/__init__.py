"""Scoring: answers against gold with the tasks' official metrics. Here live the metrics and
their bootstrap intervals (`metrics`, `intervals`), units with gold as every scorer takes them
(`units`, `scorers`), model prediction files read and turned into answers (`predictions`,
`model_predictions`), the standard scorer run locally on files (`local_score`), per-phenomenon
diagnostics, the GLUE/SuperGLUE benchmark average (`benchmark`), McNemar's test and the
comparison of a model with a study's humans (`compare`). Nothing here reads labels or builds a
report (that is `annotate.report`, which builds on this package); nothing knows of the screen,
and heavy libraries (scipy, statsmodels) are imported by the functions that need them.
"""
