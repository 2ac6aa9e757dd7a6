"""What every part of the sandbox stands on: the database and sessions, request dependencies,
the contract's error bodies, JSON bodies and query validation, pagination, the clock and
run-time state, ids, money, times, numbering, working days, and the request counters."""
