"""What the results say (pure): running totals, estimates, ratings, the SPRT, standings, checks."""
