"""Tournaments, along a session's way: plan/, play/, store/, stats/, report/; and cli/, the nap command."""
