"""The protocol engine: studies, annotator sessions, the gate and test assignment. No screen."""
