"""The human-ceiling report of a study: load its labels and code them (`data`), aggregate them
with the declared tie rule (`aggregation`), score them with `annotate.scoring`, and add what the
published baselines left out: individual annotators and agreement (`stats`), gold suspects,
catch items, flags and models on the same items (`sections`). The report is computed first as
typed data (`model`, built by `build`; the benchmark row by `benchmark`) and rendered second
(`render`: rich table, Markdown, HTML, LaTeX; JSON comes from the data). Files written from a
study live in `annotate.export`. Nothing here knows of the screen, and pandas, scipy and
statsmodels are imported by the modules that need them, not by this package.
"""
