"""Widgets of the curation screens."""
