"""LakeFormationGrants: what the EMR job role may do in the lake (the EMR Serverless job role's grants,
the same, are in test_serverless.py)."""

from __future__ import annotations

from tests.stacks.templates import by_type as _by_type
from tests.stacks.templates import logical_id as _id


def test_lake_formation_grants_to_the_job_role(synth):
    tpl = synth.template_json("emr")
    role = {"Fn::GetAtt": [_id(tpl, "RolesInstanceRole", "AWS::IAM::Role"), "Arn"]}
    grants = [
        g["Properties"]
        for k, g in _by_type(tpl, "AWS::LakeFormation::PrincipalPermissions").items()
        if not k.startswith("Serverless")
    ]
    assert all(g["Principal"] == {"DataLakePrincipalIdentifier": role} for g in grants)
    assert all(g["PermissionsWithGrantOption"] == [] for g in grants)
    by_resource = {}
    for g in grants:
        resource = g["Resource"]
        if "DataLocation" in resource:
            by_resource["location"] = g["Permissions"]
        elif "Database" in resource:
            by_resource["db:" + resource["Database"]["Name"]] = g["Permissions"]
        else:
            assert resource["Table"]["TableWildcard"] == {}
            by_resource["tables:" + resource["Table"]["DatabaseName"]] = g["Permissions"]
    env = synth.env
    assert by_resource == {
        "location": ["DATA_LOCATION_ACCESS"],
        # Spark's catalog client looks it up at every session start.
        "db:default": ["DESCRIBE"],
        f"db:emr_lineage_{env}_clean": ["DESCRIBE"],
        f"tables:emr_lineage_{env}_clean": ["SELECT", "DESCRIBE"],
        f"db:emr_lineage_{env}_curated": ["DESCRIBE", "CREATE_TABLE"],
        f"tables:emr_lineage_{env}_curated": ["SELECT", "INSERT", "DELETE", "DESCRIBE", "ALTER", "DROP"],
    }


def test_each_stacks_grants_are_made_one_at_a_time(any_synth):
    """Lake Formation loses track of grants CloudFormation makes in parallel: each waits for the one before."""
    for name in any_synth.stack_names:
        tpl = any_synth.template_json(name)
        grants = list(_by_type(tpl, "AWS::LakeFormation::PrincipalPermissions"))
        for before, grant in zip(grants, grants[1:], strict=False):
            assert before in tpl["Resources"][grant].get("DependsOn", []), (name, grant)
