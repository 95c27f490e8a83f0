"""The human-ceiling report of a study: load its labels (`data`), code them (`coding`),
aggregate them with the declared tie rule (`aggregate`, `study_aggregate`), score them with
`annotate.scoring`, and add what the published baselines left out: individual annotators
(`annotators`), agreement (`agreement`, `agreement_summary`), gold suspects (`suspects`) and
models on the same items (`model_rows`). The report is computed first as typed data (`schema`,
built by `build`) and rendered second (`render`: rich table, Markdown; JSON comes from the
data). The study-to-file exports (`human_answers`, `submission`, `label_table`) and the
long-format label reader (`longformat`) live here too. Nothing here knows of the screen, and
pandas, scipy and statsmodels are imported by the modules that need them, not by this package.
"""
