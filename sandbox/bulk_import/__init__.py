"""Bulk import of payment requests: reading the CSV, jobs and items, applying rows, and the
background worker that runs jobs outside any request."""
