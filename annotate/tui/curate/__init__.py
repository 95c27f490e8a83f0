"""The curator's app: author diagnostic pairs, review others' blind, settle disagreements."""
