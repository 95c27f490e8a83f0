"""The benchmark row: one study per task, the benchmark average, and the published rows."""
