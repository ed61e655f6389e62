"""The rule book: the typed model of YAML rules, their loader, linter and self-test."""
