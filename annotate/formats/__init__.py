"""Reading task data files and writing submission files."""
