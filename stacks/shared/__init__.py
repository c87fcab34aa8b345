"""Helpers shared by every component: nag acknowledgements, settings mapping, access logs, tags, storage
defaults, published SSM parameters and outputs, constructs that keep their resources' logical IDs."""
