"""The cloud: the course's GCP project following the board (providers, jobs, sync and reconcile,
inventory, power, preflight). Stands on the board; never imports `usage`."""
