"""Crowd platforms reached through their own APIs (today: Prolific). Below the front ends,
above the engine: the command line calls these; they call the protocol and the store."""
