"""What the service does as time passes (the clock runs each day's steps: mandates, schedules,
direct-debit collection, overdue invoices, payouts), and the seeded demo data."""
