"""Playing a tournament: the runner, blocks, bot processes and their sandbox, locks, executors."""
