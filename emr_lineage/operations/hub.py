"""doctor's check of a spoke (``hub``): its interface endpoint to the hub's endpoint service is there and
``available``, i.e. the hub accepted this account's connection (it accepts only its ``gateway.spoke_accounts``)."""

from __future__ import annotations

from emr_lineage.operations.checks import CheckResult, DoctorClients, Status, aws_call
from emr_lineage.settings.model import EnvironmentSettings

CHECK, TITLE = "hub-endpoint", "interface endpoint to the hub's lineage service"
AVAILABLE = "available"
NOT_FOUND = "InvalidVpcEndpointId.NotFound"
# EC2 writes the states in camel case (pendingAcceptance); its model in capitals (PendingAcceptance).
NOT_ACCEPTED = frozenset({"pendingacceptance", "rejected"})


def accept_fix(account: str | None) -> str:
    """What makes the hub accept this account's endpoint."""
    this = f"this account ({account})" if account else "this account"
    return (
        f"the hub must list {this} in its gateway.spoke_accounts and deploy its Gateway stack: its endpoint "
        "service accepts those accounts' connections, and no other"
    )


def hub_endpoint(clients: DoctorClients, settings: EnvironmentSettings, endpoint_id: str) -> CheckResult:
    """The endpoint the HubLink stack published (``/emr-lineage/<env>/hub/endpoint-id``) exists, connects to
    ``hub.endpoint_service_name`` and is available."""
    hub = settings.hub
    if hub is None:
        raise ValueError("hub_endpoint checks a spoke: its settings need hub")
    redeploy = f"deploy the HubLink stack (make deploy ENV={settings.name})"
    found, problem = aws_call(lambda: clients.ec2.describe_vpc_endpoints(VpcEndpointIds=[endpoint_id])["VpcEndpoints"])
    if problem and not problem.startswith(NOT_FOUND):
        fix = "doctor reads the endpoint: give its identity ec2:DescribeVpcEndpoints"
        return CheckResult(CHECK, TITLE, Status.FAIL, f"EC2 DescribeVpcEndpoints: {problem}", fix)
    if not found:
        detail = f"no endpoint {endpoint_id}: Spark's lineage has no way to the hub"
        return CheckResult(CHECK, TITLE, Status.FAIL, detail, f"{redeploy}; {accept_fix(settings.account)}")
    (endpoint,) = found
    service, state = endpoint.get("ServiceName", ""), endpoint.get("State", "")
    if service != hub.endpoint_service_name:
        detail = f"{endpoint_id} connects to {service}, not to hub.endpoint_service_name {hub.endpoint_service_name}"
        return CheckResult(CHECK, TITLE, Status.FAIL, detail, redeploy)
    if state.lower() == AVAILABLE.lower():
        return CheckResult(CHECK, TITLE, Status.PASS, f"{endpoint_id} to {service}: {state}")
    detail = f"{endpoint_id} to {service} is {state}: lineage does not reach the hub"
    if state.lower() in NOT_ACCEPTED:
        return CheckResult(
            CHECK, TITLE, Status.FAIL, f"{detail} (the hub has not accepted it)", accept_fix(settings.account)
        )
    if state.lower() == "pending":
        return CheckResult(CHECK, TITLE, Status.FAIL, detail, "wait a few minutes: EC2 is making the endpoint")
    return CheckResult(CHECK, TITLE, Status.FAIL, detail, f"{redeploy}; {accept_fix(settings.account)}")
