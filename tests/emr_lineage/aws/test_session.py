"""One boto3 client factory: every client of the package is made by aws/session.py's new_client."""

from __future__ import annotations

import ast
from pathlib import Path

import emr_lineage
from emr_lineage.aws.session import RETRY_POLICY, new_client

PACKAGE = Path(emr_lineage.__file__).parent


def _client_calls(path: Path) -> list[int]:
    """Lines of ``boto3.client(...)``, ``<session>.client("service", ...)`` and ``boto3.session.Session(...)``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        names_a_service = bool(node.args) and isinstance(node.args[0], ast.Constant | ast.Name)
        boto3_session = node.func.attr == "Session" and ast.unparse(node.func).startswith("boto3.")
        if boto3_session or (node.func.attr == "client" and names_a_service):
            found.append(node.lineno)
    return found


def test_no_module_but_the_factory_makes_a_boto3_client() -> None:
    factory = PACKAGE / "aws" / "session.py"
    makers = {
        str(path.relative_to(PACKAGE)): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != factory and "jobs" not in path.parts and (lines := _client_calls(path))
    }
    assert makers == {}
    assert _client_calls(factory), "the scan finds the factory's own call"


def test_a_client_gets_the_retry_policy_unless_told_otherwise(monkeypatch) -> None:
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    assert new_client("s3").meta.config.retries == RETRY_POLICY.retries
    assert new_client("s3").meta.region_name == "eu-west-1"
    assert new_client("s3", config=None).meta.config.retries != RETRY_POLICY.retries
