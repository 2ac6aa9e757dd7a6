"""Helpers shared by the tests: the sandbox admin client, database set-up."""
