"""Click sub-commands of ``emr-lineage``, one module per command group.

Each module only parses arguments and prints; the work happens in the modules of
``emr_lineage`` it calls. ``emr_lineage.cli`` registers every command.
"""
