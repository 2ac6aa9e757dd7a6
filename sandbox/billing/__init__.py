"""Billing: invoices (lines, tax, actions, instalments, the PDF), payment requests, collection
pause and resume, imported payments, schedules, the catalogue and workflows."""
