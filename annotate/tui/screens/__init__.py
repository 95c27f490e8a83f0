"""Screens of the annotator app: one per step of the protocol, plus help and the flag dialog."""
