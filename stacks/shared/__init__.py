"""Helpers shared by every component: nag acknowledgements, settings mapping, access logs, tags."""
