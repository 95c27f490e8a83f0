"""The human-ceiling report: load a study's labels, aggregate them, score them with the task's
official metrics, and add what the published baselines left out (intervals, individual
annotators, agreement, per-phenomenon diagnostics, a gold-suspect list).

Computation returns data (`report.build_report`, `report.study_report`); rendering (rich table,
Markdown, JSON) lives in `render`. Nothing here knows of the screen, and the heavy libraries
(pandas, scipy, statsmodels) are imported by the modules that need them, not by this package.
"""
