"""Keeping a tournament: the SQLite store, its schema, and the sessions' logs."""
