"""What a tournament is: its config, entries, schedule, manifests and the match plan (pure values)."""
