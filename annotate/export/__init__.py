"""Files written from a study: submission files, label tables and soft labels. The answers they
write are aggregated exactly as the report aggregates them (`human_answers`)."""
