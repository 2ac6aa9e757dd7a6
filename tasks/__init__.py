"""One module per job: pure functions do the work, thin ``@task`` wrappers add retries and reports.
Filled in by the job issues."""
