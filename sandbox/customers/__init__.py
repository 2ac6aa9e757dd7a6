"""Customers: their records and listing, settings (workflow, payment, autopilot), direct-debit
mandates and cards on file."""
