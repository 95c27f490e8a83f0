"""The console's screens (each reads its data from the engine, then draws it)."""
