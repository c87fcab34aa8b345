"""Questions asked of lineage events: what a change reaches (impact), how a schema moved (drift),
who read or wrote what and which versions (audit, runs). One event-based implementation for event
files, Marquez's raw events and the gateway's archive (:mod:`emr_lineage.analysis.sources`)."""
