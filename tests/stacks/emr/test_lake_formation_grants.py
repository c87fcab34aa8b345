"""LakeFormationGrants: what the EMR job role may do in the lake (the EMR Serverless job role's grants,
the same, are in test_serverless.py)."""

from __future__ import annotations

from tests.stacks.templates import by_type as _by_type
from tests.stacks.templates import logical_id as _id
from tests.stacks.variants import EXISTING_BUCKET, EXISTING_DATABASES


def _by_resource(grants: list[dict]) -> dict[str, list[str]]:
    """Permissions by resource (of every grant on it, in order): ``location``, ``db:<name>``, ``tables:<database>``."""
    by_resource: dict[str, list[str]] = {}
    for g in grants:
        resource = g["Resource"]
        if "DataLocation" in resource:
            key = "location"
        elif "Database" in resource:
            key = "db:" + resource["Database"]["Name"]
        else:
            assert resource["Table"]["TableWildcard"] == {}
            key = "tables:" + resource["Table"]["DatabaseName"]
        by_resource.setdefault(key, []).extend(g["Permissions"])
    return by_resource


def _granted_to(tpl: dict, role_id: str) -> list[dict]:
    role = {"DataLakePrincipalIdentifier": {"Fn::GetAtt": [role_id, "Arn"]}}
    return [
        g["Properties"]
        for g in _by_type(tpl, "AWS::LakeFormation::PrincipalPermissions").values()
        if g["Properties"]["Principal"] == role
    ]


def test_lake_formation_grants_to_the_job_role(synth):
    tpl = synth.template_json("emr")
    role_id = _id(tpl, "RolesInstanceRole", "AWS::IAM::Role")
    grants = [
        g["Properties"]
        for k, g in _by_type(tpl, "AWS::LakeFormation::PrincipalPermissions").items()
        if not k.startswith("Serverless")
    ]
    assert grants == _granted_to(tpl, role_id)
    assert all(g["PermissionsWithGrantOption"] == [] for g in grants)
    by_resource = _by_resource(grants)
    env = synth.env
    assert by_resource == {
        "location": ["DATA_LOCATION_ACCESS"],
        # Spark's catalog client looks it up at every session start.
        "db:default": ["DESCRIBE"],
        # Jobs create Iceberg tables in each zone's database and commit to any of them (the sample pipeline's
        # orders_clean in clean, the others in curated), whichever job role made them.
        f"db:emr_lineage_{env}_clean": ["DESCRIBE", "CREATE_TABLE"],
        f"tables:emr_lineage_{env}_clean": ["SELECT", "DESCRIBE", "INSERT", "DELETE", "ALTER", "DROP"],
        f"db:emr_lineage_{env}_curated": ["DESCRIBE", "CREATE_TABLE"],
        f"tables:emr_lineage_{env}_curated": ["SELECT", "INSERT", "DELETE", "DESCRIBE", "ALTER", "DROP"],
    }


def test_the_clean_zones_read_grants_are_kept_as_deployed_and_its_writes_are_grants_of_their_own(synth):
    """A grant whose permissions change is replaced, and the old one's delete would revoke what both hold: the
    clean zone's reads keep their logical ids and permissions, its writes (Iceberg tables) are added beside."""
    tpl = synth.template_json("emr")
    grants = _by_type(tpl, "AWS::LakeFormation::PrincipalPermissions")
    permissions = {
        name: grants[_id(tpl, f"LakeFormationGrants{name}", "AWS::LakeFormation::PrincipalPermissions")]["Properties"][
            "Permissions"
        ]
        for name in ("Databaseclean", "Tablesclean", "DatabaseWritesclean", "TableWritesclean")
    }
    assert permissions == {
        "Databaseclean": ["DESCRIBE"],
        "Tablesclean": ["SELECT", "DESCRIBE"],
        "DatabaseWritesclean": ["CREATE_TABLE"],
        "TableWritesclean": ["INSERT", "DELETE", "ALTER", "DROP"],
    }


def test_each_stacks_grants_are_made_one_at_a_time(any_synth):
    """Lake Formation loses track of grants CloudFormation makes in parallel: each waits for the one before."""
    for name in any_synth.stack_names:
        tpl = any_synth.template_json(name)
        grants = list(_by_type(tpl, "AWS::LakeFormation::PrincipalPermissions"))
        for before, grant in zip(grants, grants[1:], strict=False):
            assert before in tpl["Resources"][grant].get("DependsOn", []), (name, grant)


def test_existing_databases_are_granted_to_every_job_role_as_the_curated_zone_is(optional_synth, render):
    """data_lake.existing_databases: in addition to the zone databases, with the curated zone's permissions; the
    data location is the existing bucket."""
    tpl = optional_synth.template_json("emr")
    roles = [_id(tpl, "RolesRuntimeRole", "AWS::IAM::Role"), _id(tpl, "ServerlessJobRole", "AWS::IAM::Role")]
    for role_id in roles:
        grants = _granted_to(tpl, role_id)
        by_resource = _by_resource(grants)
        curated = "emr_lineage_prod_curated"
        assert {"db:emr_lineage_prod_clean", f"db:{curated}", "db:default"} <= set(by_resource)
        for name in EXISTING_DATABASES:
            assert by_resource[f"db:{name}"] == by_resource[f"db:{curated}"] == ["DESCRIBE", "CREATE_TABLE"]
            assert by_resource[f"tables:{name}"] == by_resource[f"tables:{curated}"]
        (location,) = [g["Resource"]["DataLocation"] for g in grants if "DataLocation" in g["Resource"]]
        assert render(location["ResourceArn"]) == f"arn:{{Ref:AWS::Partition}}:s3:::{EXISTING_BUCKET}"
        assert len(grants) == 8 + 2 * len(EXISTING_DATABASES)  # the clean zone's writes: grants of their own
