from emr_lineage.cli import main

main()
