"""The store: tables, engine factory and the queries the rest of the tool needs."""
