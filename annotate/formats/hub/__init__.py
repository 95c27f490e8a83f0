"""Task data as the Hugging Face Hub and the `datasets` library leave it on disk.

- `arrow_files`: Parquet and Arrow files through pyarrow (the `parquet` extra), with the
  features the library stores in their schema;
- `features`: ClassLabel names from those features or from a `dataset_info.json`;
- `records`: rows (dicts) to items, integer labels mapped through the file's own names;
- `layout`: which files of a folder hold which split (Hub config folders and snapshots,
  `save_to_disk` folders), split names from file names;
- `zips`: the task zips GLUE and SuperGLUE distributed (`RTE.zip`).

Nothing here needs the `datasets` package.
"""
