"""Widgets of the annotator app. All text from data or people goes through `verbatim` so it is
never parsed as markup."""
