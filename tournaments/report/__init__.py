"""Showing a tournament: standings files and pages, session pages, replays, provenance, audit."""
