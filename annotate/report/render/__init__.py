"""Renderers of the typed report: rich table and Markdown (`table`), HTML, LaTeX, figures and
the benchmark views. They read the report's data and compute nothing."""
