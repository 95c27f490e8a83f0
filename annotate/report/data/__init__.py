"""A study's labels as the report reads them: loaded from the store (`loading`), coded into
units (`coding`), or read from a long-format file (`longformat`)."""
