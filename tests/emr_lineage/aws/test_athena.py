"""emr_lineage.aws.athena: results read page by page with the header row dropped, Athena's reason kept,
refusals as one-line AwsErrors (the CLI's runs against moto: tests/emr_lineage/cli/test_archive.py)."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from botocore.stub import Stubber

from emr_lineage.aws import athena
from emr_lineage.aws.clients import AwsError
from emr_lineage.aws.session import new_client


def _row(*values: str | None) -> dict[str, Any]:
    return {"Data": [{} if v is None else {"VarCharValue": v} for v in values]}


def _two_pages() -> tuple[Any, Stubber]:
    """A real boto3 Athena client whose get_query_results answers two pages (moto gives one page only)."""
    client = new_client("athena", session=boto3.session.Session(region_name="eu-west-1"))
    stubber = Stubber(client)
    info = {
        "ResultSetMetadata": {"ColumnInfo": [{"Name": "job", "Type": "varchar"}, {"Name": "runs", "Type": "bigint"}]}
    }
    first = {"ResultSet": {"Rows": [_row("job", "runs"), _row("a", "1")], **info}, "NextToken": "t2"}
    stubber.add_response("get_query_results", first, {"QueryExecutionId": "q-1"})
    last = {"ResultSet": {"Rows": [_row("b", None)], **info}}
    stubber.add_response("get_query_results", last, {"QueryExecutionId": "q-1", "NextToken": "t2"})
    return client, stubber


def test_results_are_read_page_by_page_without_the_header_row() -> None:
    client, stubber = _two_pages()
    with stubber:
        result = athena.query_results(client, "q-1")
    stubber.assert_no_pending_responses()  # both pages asked for, the second with the first's NextToken
    assert result == athena.QueryResult(("job", "runs"), (("a", "1"), ("b", None)))


class Execution:
    def __init__(self, status: dict[str, Any]) -> None:
        self.status = status

    def get_query_execution(self, QueryExecutionId: str) -> dict[str, Any]:
        return {"QueryExecution": {"Status": self.status, "Statistics": {"DataScannedInBytes": 12}}}


def test_the_reason_is_athenas_state_change_reason_or_its_error_message() -> None:
    reason = "Query exhausted resources at this scale factor"
    assert athena.poll(Execution({"State": "FAILED", "StateChangeReason": reason}), "q", 1.0).reason == reason
    error = {"State": "FAILED", "AthenaError": {"ErrorMessage": "Bytes scanned limit was exceeded"}}
    snapshot = athena.poll(Execution(error), "q", 1.0)
    assert (snapshot.reason, snapshot.scanned_bytes, snapshot.finished) == (
        "Bytes scanned limit was exceeded",
        12,
        True,
    )


class Refusing:
    def start_query_execution(self, **kwargs: Any) -> dict[str, Any]:
        raise ClientError({"Error": {"Code": "InvalidRequestException", "Message": "WorkGroup is disabled"}}, "Start")


def test_a_refused_start_is_one_line() -> None:
    with pytest.raises(
        AwsError, match="refused the query in workgroup wg .InvalidRequestException: WorkGroup is disabled"
    ):
        athena.start_query(Refusing(), "SELECT 1", workgroup="wg", database="db")
