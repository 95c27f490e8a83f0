"""Screens of the curation app."""
