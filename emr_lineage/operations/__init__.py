"""Operating an environment: the TLS certificates EMR's in-transit encryption reads (``tls``) and
the checks of everything a deploy and a cluster need (``doctor``). See docs/cli.md."""
