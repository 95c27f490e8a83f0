"""Curating diagnostic sets: authoring minimal-edit NLI pairs, tagging them with the GLUE
taxonomy, blind second opinions, agreement, statistics, and export to the GLUE/SuperGLUE file
layouts. No screen code here: the TUI and the CLI drive these functions."""
