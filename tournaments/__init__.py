"""Tournaments: scheduling (pure), running blocks, storage (SQLite), standings (pure), publishing."""
