"""The files a finance team downloads: the payout export and the business bank statement in
the layouts of UK banks."""
