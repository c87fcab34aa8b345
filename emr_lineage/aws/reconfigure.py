"""A running EMR cluster's configurations: read them per instance group (or per instance type of a fleet),
submit new ones, and wait until EMR has applied them.

What this relies on, from the Amazon EMR Release Guide ("Reconfigure an instance group in a running
cluster", https://docs.aws.amazon.com/emr/latest/ReleaseGuide/emr-configure-apps-running-cluster.html)
and Management Guide ("Reconfiguring instance fleets",
https://docs.aws.amazon.com/emr/latest/ManagementGuide/instance-fleet-reconfiguration.html):

- a reconfiguration (ModifyInstanceGroups, ModifyInstanceFleet) replaces the group's configurations with the
  list sent (``OVERWRITE``): the caller sends the whole list. Those given when the cluster was created
  (DescribeCluster's) can be overridden per group, not deleted;
- a group's ``ConfigurationsVersion`` is the version last requested, ``LastSuccessfullyAppliedConfigurationsVersion``
  the one in place; it is ``RECONFIGURING`` meanwhile, and a failed reconfiguration is reverted;
- a fleet is reconfigured per instance type, every instance type restated with its launch fields; it has no
  version numbers;
- a configuration may name a Secrets Manager secret: key ``EMR.secret@<key>``, value the secret's ARN. EMR
  reads the secret when it applies the configuration, and its describe and list calls return ``<key>`` with the
  ARN (https://docs.aws.amazon.com/emr/latest/ReleaseGuide/storing-sensitive-data.html). Configurations read
  back are so marked again before they are sent (:func:`as_sent`), or the nodes would get the ARN.
"""

from __future__ import annotations

import copy
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from emr_lineage.aws.clients import AwsError, aws_message
from emr_lineage.aws.polling import poll_until

GROUPS, FLEETS = "INSTANCE_GROUP", "INSTANCE_FLEET"
SECRET_KEY_PREFIX = "EMR.secret@"
SECRET_ARN = re.compile(r"arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[\w/+=.@-]+")
# A group in these states takes a reconfiguration; ended ones are left alone (nothing runs there).
READY = "RUNNING"
ENDED = frozenset({"TERMINATED", "ENDED"})
FAILED = frozenset({"SUSPENDED", "ARRESTED", "TERMINATING", "TERMINATED", "SHUTTING_DOWN", "ENDED"})
# An instance type's launch fields that a fleet's reconfiguration restates (InstanceTypeConfig's).
_TYPE_FIELDS = ("InstanceType", "WeightedCapacity", "CustomAmiId", "Priority")
DEFAULT_DEADLINE_SECONDS = 3600


@dataclass(frozen=True)
class Cluster:
    cluster_id: str
    name: str
    state: str
    release_label: str
    applications: tuple[str, ...]
    service_role: str
    collection: str  # GROUPS or FLEETS
    configurations: tuple[dict[str, Any], ...]  # given when the cluster was created
    log_uri: str = ""  # where EMR archives its logs (none: the nodes' own /mnt/var/log)


@dataclass(frozen=True)
class InstanceSet:
    """What holds its own configurations: an instance group, or one instance type of a fleet."""

    kind: str  # "group" or "fleet"
    set_id: str  # ig-... or if-...
    role: str  # MASTER, CORE or TASK
    name: str
    instance_type: str
    state: str
    configurations: tuple[dict[str, Any], ...]  # in place (a failed request's are not)
    version: int = 0  # a group's ConfigurationsVersion (the last requested)
    applied_version: int = 0  # a group's LastSuccessfullyAppliedConfigurationsVersion
    reason: str | None = None  # its state's reason, as EMR words it
    spec: Mapping[str, Any] = field(default_factory=dict)  # a fleet's InstanceTypeSpecification

    @property
    def key(self) -> str:
        return self.set_id if self.kind == "group" else f"{self.set_id}/{self.instance_type}"

    @property
    def label(self) -> str:
        what = "instance group" if self.kind == "group" else f"instance fleet {self.instance_type} of"
        return f"{what} {self.set_id} ({self.role})"


def describe_cluster(emr: Any, cluster_id: str) -> Cluster:
    """The cluster, or an :class:`AwsError` saying it is not there."""
    try:
        found = emr.describe_cluster(ClusterId=cluster_id)["Cluster"]
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") == "InvalidRequestException":
            raise AwsError(
                f"cluster {cluster_id} not found ({aws_message(exc)}): check --cluster-id and the region"
            ) from None
        raise AwsError(f"cannot read cluster {cluster_id} ({aws_message(exc)})") from None
    except BotoCoreError as exc:
        raise AwsError(f"cannot read cluster {cluster_id} ({aws_message(exc)})") from None
    return Cluster(
        cluster_id=cluster_id,
        name=found.get("Name", ""),
        state=found.get("Status", {}).get("State", "UNKNOWN"),
        release_label=found.get("ReleaseLabel", ""),
        applications=tuple(a.get("Name", "") for a in found.get("Applications", [])),
        service_role=found.get("ServiceRole", ""),
        collection=found.get("InstanceCollectionType") or GROUPS,
        configurations=tuple(found.get("Configurations", [])),
        log_uri=found.get("LogUri") or "",
    )


def instance_sets(emr: Any, cluster: Cluster) -> list[InstanceSet]:
    """Every instance group, or every instance type of every fleet, of ``cluster``."""
    try:
        if cluster.collection == FLEETS:
            pages = emr.get_paginator("list_instance_fleets").paginate(ClusterId=cluster.cluster_id)
            return [s for page in pages for fleet in page["InstanceFleets"] for s in _fleet_sets(fleet)]
        pages = emr.get_paginator("list_instance_groups").paginate(ClusterId=cluster.cluster_id)
        return [_group_set(group) for page in pages for group in page["InstanceGroups"]]
    except (ClientError, BotoCoreError) as exc:
        raise AwsError(f"cannot list the instances of {cluster.cluster_id} ({aws_message(exc)})") from None


def _group_set(group: Mapping[str, Any]) -> InstanceSet:
    version = group.get("ConfigurationsVersion") or 0
    applied = group.get("LastSuccessfullyAppliedConfigurationsVersion") or 0
    # A request that failed is reverted: the group runs the configurations last applied.
    configurations = (
        group.get("Configurations", [])
        if version == applied
        else group.get("LastSuccessfullyAppliedConfigurations", [])
    )
    return InstanceSet(
        kind="group",
        set_id=group["Id"],
        role=group.get("InstanceGroupType", ""),
        name=group.get("Name", ""),
        instance_type=group.get("InstanceType", ""),
        state=group.get("Status", {}).get("State", "UNKNOWN"),
        configurations=tuple(configurations or []),
        version=version,
        applied_version=applied,
        reason=(group.get("Status", {}).get("StateChangeReason") or {}).get("Message"),
    )


def _fleet_sets(fleet: Mapping[str, Any]) -> list[InstanceSet]:
    return [
        InstanceSet(
            kind="fleet",
            set_id=fleet["Id"],
            role=fleet.get("InstanceFleetType", ""),
            name=fleet.get("Name", ""),
            instance_type=spec.get("InstanceType", ""),
            state=fleet.get("Status", {}).get("State", "UNKNOWN"),
            configurations=tuple(spec.get("Configurations", [])),
            reason=(fleet.get("Status", {}).get("StateChangeReason") or {}).get("Message"),
            spec=spec,
        )
        for spec in fleet.get("InstanceTypeSpecifications", [])
    ]


def as_sent(configurations: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``configurations`` as a request carries them: a property whose value is a Secrets Manager secret's
    ARN is a reference to that secret again (its key marked ``EMR.secret@``), as it was when given."""
    sent = []
    for configuration in configurations:
        item = copy.deepcopy(dict(configuration))
        if "Properties" in item:
            item["Properties"] = {
                (SECRET_KEY_PREFIX + k if SECRET_ARN.fullmatch(v) and not k.startswith(SECRET_KEY_PREFIX) else k): v
                for k, v in item["Properties"].items()
            }
        if item.get("Configurations"):
            item["Configurations"] = as_sent(item["Configurations"])
        sent.append(item)
    return sent


def as_read(properties: Mapping[str, str]) -> dict[str, str]:
    """``properties`` as EMR shows them once applied: a secret's key without its ``EMR.secret@`` mark."""
    return {key.removeprefix(SECRET_KEY_PREFIX): value for key, value in properties.items()}


def secret_references(configurations: Iterable[Mapping[str, Any]]) -> list[str]:
    """The keys of ``configurations`` (as sent) that name a secret, nested classifications included."""
    found = []
    for configuration in configurations:
        found += [k for k in configuration.get("Properties", {}) if k.startswith(SECRET_KEY_PREFIX)]
        found += secret_references(configuration.get("Configurations", []))
    return found


def requests(
    cluster: Cluster, changes: Mapping[str, list[dict[str, Any]]], sets: list[InstanceSet]
) -> list[tuple[str, dict[str, Any]]]:
    """(operation, parameters) of the calls that give each set in ``changes`` (by key) its new configurations
    (as sent): one ModifyInstanceGroups for the groups, one ModifyInstanceFleet per fleet."""
    changed = [s for s in sets if s.key in changes]
    if cluster.collection != FLEETS:
        groups = [
            {"InstanceGroupId": s.set_id, "ReconfigurationType": "OVERWRITE", "Configurations": changes[s.key]}
            for s in changed
        ]
        return [("ModifyInstanceGroups", {"ClusterId": cluster.cluster_id, "InstanceGroups": groups})] if groups else []
    calls = []
    for fleet_id in dict.fromkeys(s.set_id for s in changed):
        types = [_type_config(s, changes.get(s.key)) for s in sets if s.set_id == fleet_id]
        fleet = {"InstanceFleetId": fleet_id, "InstanceTypeConfigs": types}
        calls.append(("ModifyInstanceFleet", {"ClusterId": cluster.cluster_id, "InstanceFleet": fleet}))
    return calls


def _type_config(instance_set: InstanceSet, configurations: list[dict[str, Any]] | None) -> dict[str, Any]:
    """An instance type as ModifyInstanceFleet restates it: its launch fields (read back from
    ListInstanceFleets), and new configurations where it gets them (others stay as they are)."""
    spec = instance_set.spec
    config = {name: spec[name] for name in _TYPE_FIELDS if spec.get(name) is not None}
    # One bid or the other: BidPriceAsPercentageOfOnDemandPrice is what EMR uses when no BidPrice is given.
    bid = "BidPrice" if spec.get("BidPrice") is not None else "BidPriceAsPercentageOfOnDemandPrice"
    if spec.get(bid) is not None:
        config[bid] = spec[bid]
    volumes: dict[tuple, tuple[dict[str, Any], int]] = {}
    for device in spec.get("EbsBlockDevices", []):
        volume = device.get("VolumeSpecification", {})
        shape = tuple(sorted(volume.items()))
        volumes[shape] = (volume, volumes.get(shape, (volume, 0))[1] + 1)
    if volumes:
        config["EbsConfiguration"] = {
            "EbsBlockDeviceConfigs": [{"VolumeSpecification": v, "VolumesPerInstance": n} for v, n in volumes.values()],
            **({"EbsOptimized": spec["EbsOptimized"]} if spec.get("EbsOptimized") is not None else {}),
        }
    if configurations is not None:
        config["Configurations"] = configurations
    return config


def submit(emr: Any, calls: list[tuple[str, dict[str, Any]]]) -> None:
    """Send each call; a refusal names what was already sent."""
    done: list[str] = []
    for operation, parameters in calls:
        method = {"ModifyInstanceGroups": emr.modify_instance_groups, "ModifyInstanceFleet": emr.modify_instance_fleet}
        try:
            method[operation](**parameters)
        except (ClientError, BotoCoreError) as exc:
            already = f"; already sent for {', '.join(done)}" if done else ""
            raise AwsError(f"EMR refused the reconfiguration ({aws_message(exc)}){already}") from None
        done.append(parameters.get("InstanceFleet", {}).get("InstanceFleetId") or "the instance groups")


@dataclass(frozen=True)
class Progress:
    """One set's reconfiguration at one poll: ``applying``, ``applied`` or ``failed`` (with EMR's reason)."""

    instance_set: InstanceSet
    outcome: str
    reason: str | None = None


@dataclass(frozen=True)
class ReconfigurationSnapshot:
    cluster_id: str
    sets: tuple[Progress, ...]
    elapsed: float

    @property
    def finished(self) -> bool:
        return all(p.outcome != "applying" for p in self.sets)

    @property
    def failed(self) -> list[Progress]:
        return [p for p in self.sets if p.outcome == "failed"]


class Watch:
    """Reads the sets a reconfiguration was sent to, poll after poll. A group has applied it when its last
    applied version passes the one it had before; a fleet's instance type when, after its fleet was seen
    ``RECONFIGURING``, it runs the configurations sent. One seen ``RECONFIGURING`` and back to ``RUNNING``
    without them had it reverted (failed)."""

    def __init__(
        self, emr: Any, cluster: Cluster, sent: Mapping[str, list[dict[str, Any]]], before: Mapping[str, int]
    ) -> None:
        self.emr, self.cluster, self.sent, self.before = emr, cluster, sent, before
        self.seen: set[str] = set()  # sets (ids) seen RECONFIGURING

    def __call__(self, elapsed: float) -> ReconfigurationSnapshot:
        now = {s.key: s for s in instance_sets(self.emr, self.cluster)}
        progress = []
        for key in self.sent:
            current = now.get(key)
            if current is None:
                progress.append(
                    Progress(InstanceSet("group", key, "", "", "", "ENDED", ()), "failed", "no longer listed")
                )
                continue
            if current.state == "RECONFIGURING":
                self.seen.add(current.set_id)
            progress.append(self._progress(key, current))
        return ReconfigurationSnapshot(self.cluster.cluster_id, tuple(progress), elapsed)

    def _progress(self, key: str, current: InstanceSet) -> Progress:
        if current.state in FAILED:
            return Progress(current, "failed", current.reason or current.state)
        if current.state != READY:
            return Progress(current, "applying")
        if current.kind == "group" and current.applied_version > self.before.get(key, 0):
            return Progress(current, "applied")
        seen = current.set_id in self.seen
        if current.kind == "fleet" and seen and _same(current.configurations, self.sent[key]):
            return Progress(current, "applied")
        if seen:
            return Progress(current, "failed", current.reason or "EMR reverted it to the configuration before")
        return Progress(current, "applying")


def _same(read: Iterable[Mapping[str, Any]], sent: Iterable[Mapping[str, Any]]) -> bool:
    """Whether configurations read back are those sent (a secret's key without its mark, empty lists aside)."""

    def shape(configurations: Iterable[Mapping[str, Any]]) -> list[tuple]:
        return sorted(
            (
                c.get("Classification", ""),
                sorted(as_read(c.get("Properties") or {}).items()),
                shape(c.get("Configurations") or []),
            )
            for c in configurations
        )

    return shape(read) == shape(sent)


def pause(seconds: float) -> None:
    """The wait between polls (tests replace it to move the stubbed states along)."""
    time.sleep(seconds)


clock: Callable[[], float] = time.monotonic  # tests replace it to pass a deadline without waiting


def wait_for_reconfiguration(
    emr: Any,
    cluster: Cluster,
    sent: Mapping[str, list[dict[str, Any]]],
    before: Mapping[str, int],
    *,
    poll_interval: float,
    deadline_seconds: float = DEFAULT_DEADLINE_SECONDS,
    on_poll: Callable[[ReconfigurationSnapshot], None] | None = None,
) -> tuple[ReconfigurationSnapshot, bool]:
    """(the last snapshot, whether every set finished) after polling until they all did or the deadline. A
    KeyboardInterrupt propagates: the reconfiguration goes on in EMR either way."""
    return poll_until(
        Watch(emr, cluster, sent, before),
        lambda snapshot: snapshot.finished,
        poll_interval=poll_interval,
        pause=pause,
        clock=clock,
        deadline_seconds=deadline_seconds,
        on_poll=on_poll,
    )
