"""The doctor's HTTP checks: Marquez answers as Marquez, the gateway's route reaches the ingest.

Both servers sit behind the internal load balancer. From outside the VPC, forward a local port to
it through SSM (docs/e2e.md) and give doctor ``--marquez http://localhost:5080``.
"""

from __future__ import annotations

from emr_lineage.http import HttpClient, HttpError
from emr_lineage.marquez.api import LINEAGE_ENDPOINT
from emr_lineage.marquez.client import MarquezClient, MarquezError, NotMarquezError
from emr_lineage.operations.checks import CheckResult, Status, error_of

PORT_FORWARD_FIX = (
    "the load balancer is internal: run doctor inside the VPC, or forward a port through SSM "
    "(docs/e2e.md) and pass --marquez http://localhost:5080"
)
UNAUTHORIZED = 401
INTERNAL_SERVER_ERROR = 500
NOT_MARQUEZ_FIX = "give the Marquez API base URL (--marquez)"
# One retry: a transient blip is forgiven, an unreachable server is reported without backoff waits.
RETRIES = 1


# docs/operations.md: how to find and rename a namespace row Marquez cannot read back.
UNLISTABLE_FIX = (
    "rename the namespace Marquez cannot read back (docs/operations.md, 'A namespace list that answers 500')"
)


def marquez(url: str, *, timeout: float, from_parameter: bool) -> CheckResult:
    """``GET /api/v1/namespaces`` answers as Marquez (the client's probe), and the whole namespace list
    reads: one namespace row Marquez cannot read back makes every page that holds it answer 500 (and the
    web UI with it), while the probe's first page may not hold it."""
    title = "Marquez API reachable"
    fix = PORT_FORWARD_FIX if from_parameter else "check the URL and that the port-forward session is open"
    with MarquezClient(url, timeout=timeout, retries=RETRIES) as client:
        try:
            client.probe()
        except NotMarquezError as exc:
            return CheckResult("marquez", title, Status.FAIL, error_of(exc), NOT_MARQUEZ_FIX)
        except MarquezError as exc:
            return CheckResult("marquez", title, Status.FAIL, error_of(exc), fix)
        try:
            count = len(client.namespaces())
        except MarquezError as exc:
            unlistable = exc.status == INTERNAL_SERVER_ERROR  # what a row it cannot read back makes it answer
            detail = f"the namespace list does not read: {error_of(exc)}"
            return CheckResult("marquez", title, Status.FAIL, detail, UNLISTABLE_FIX if unlistable else fix)
    return CheckResult("marquez", title, Status.PASS, f"{url} answers as Marquez; its {count} namespace(s) list")


def gateway(url: str, *, env: str, timeout: float, from_parameter: bool) -> CheckResult:
    """``POST /api/v1/lineage`` without a key answers 401: the load balancer sends the route to the
    ingest (Marquez itself would take or refuse the body). The body is ``{}``: never lineage."""
    title = "lineage gateway reachable"
    endpoint = url.rstrip("/") + LINEAGE_ENDPOINT
    try:
        with HttpClient(timeout=timeout, retries=0, service=f"the gateway at {url}") as client:
            reply = client.request("POST", endpoint, data=b"{}", headers={"Content-Type": "application/json"})
    except HttpError as exc:
        fix = PORT_FORWARD_FIX if from_parameter else "check the URL and that the port-forward session is open"
        return CheckResult("gateway", title, Status.FAIL, error_of(exc), fix)
    if reply.status == UNAUTHORIZED:
        return CheckResult("gateway", title, Status.PASS, f"POST {endpoint} without a key -> 401 (the ingest)")
    detail = f"POST {endpoint} without a key -> HTTP {reply.status}, not 401: the ingest does not answer this route"
    return CheckResult("gateway", title, Status.FAIL, detail, f"deploy the Gateway stack (make deploy ENV={env})")
