"""billops: the command line (``billops``) and the wiring of settings, setup and the demo."""
