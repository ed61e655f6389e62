"""Reading logs: turning bytes from files, gzip and stdin into numbered, cleaned lines and
scanning them for rule patterns."""
