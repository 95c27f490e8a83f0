"""Files written from a study: submission files, label tables and soft labels. The answers they
write are aggregated exactly as the report aggregates them (`human_answers`)."""

MANIFEST_SUFFIX = ".manifest.json"
"""`glue.manifest.json` / `superglue.manifest.json`: both benchmarks can share a folder (here,
light, so that `score` can pass over a manifest without importing the exports)."""
