from emr_lineage.cli.app import main

main()
