"""The board: who holds which node and IP (allocation, formation, moves), sharing windows and
their access files, incidents, run records and SSH keys. The lowest floor of compute: it imports
neither `cloud` nor `usage`; what they add to it comes through the seams in `hooks.py` and the
lifecycle events of `apps.core.lifecycle`."""
