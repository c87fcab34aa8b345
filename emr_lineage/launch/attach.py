"""Attach the OpenLineage listener to a running EMR cluster, and detach it (``emr-lineage attach``/``detach``).

A cluster emr-lineage did not start has no bootstrap action of ours, so attach reconfigures its instance
groups (or the instance types of its fleets) with what a job run of EMR Serverless gets: the pinned jar
staged in the artifacts bucket (``spark.jars``), the listener properties of the one builder
(:func:`emr_lineage.spark.conf.cluster_listener_properties`), the environment's lineage URL and, with the
gateway on, a reference to its API key's secret that EMR resolves on the nodes.

With ``openlineage.trusted_ca`` a driver must trust the load balancer's CA, and nothing of ours ran on the
nodes. A cluster-mode driver (a YARN application master, on any node) gets the staged truststore as an archive
(:func:`emr_lineage.spark.truststore.cluster_mode_properties`); a client-mode driver runs on the primary node,
whose Java truststores get the CA from one step, the bootstrap script with ``--trusted-ca-only``
(:func:`trust_step`). Detach removes the properties; the CA stays trusted on the primary node.

The user's configuration stays whole: each set's configurations are read and ours merged into them
(EMR replaces a set's configurations with the list sent). Attach adds keys and appends to the lists
``spark.jars`` and ``spark.extraListeners``; it never replaces a value the cluster already has (such a
conflict is refused, as is another listener unless ``append_listener``). What it added is written into the
same ``spark-defaults``, under :data:`~emr_lineage.spark.conf.ATTACHED_PROPERTY`, and detach removes exactly
that: a key attach added and the user changed since is the user's and stays; an item appended to a list is
taken out of it, the rest of the list kept.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from emr_lineage.aws import reconfigure
from emr_lineage.aws.artifacts import BOOTSTRAP_SCRIPT_KEY
from emr_lineage.aws.clients import AwsError
from emr_lineage.aws.reconfigure import Cluster, InstanceSet, as_read, as_sent
from emr_lineage.errors import EmrLineageError
from emr_lineage.launch.listener_target import ListenerTarget
from emr_lineage.settings.limits import EMR_RELEASES
from emr_lineage.settings.model import EnvironmentSettings
from emr_lineage.spark.conf import (
    ATTACHED_PROPERTY,
    EXTRA_LISTENERS,
    LISTENER_CLASS,
    MASK,
    SPARK_DEFAULTS,
    SPARK_JARS,
    ListenerConfig,
    cluster_listener_properties,
    list_items,
    masked,
    scrubbed,
    spark_defaults_of,
)
from emr_lineage.spark.truststore import SPARK_ARCHIVES, cluster_mode_properties

RUNNING_CLUSTER = frozenset({"RUNNING", "WAITING"})
ENDED_CLUSTER = frozenset({"TERMINATING", "TERMINATED", "TERMINATED_WITH_ERRORS"})
LIST_PROPERTIES = (SPARK_JARS, EXTRA_LISTENERS, SPARK_ARCHIVES)
# EMR's documented way to run a command on the primary node as a step
# (https://docs.aws.amazon.com/emr/latest/ReleaseGuide/emr-commandrunner.html).
COMMAND_RUNNER = "command-runner.jar"
TRUST_STEP_NAME = "emr-lineage: trust openlineage.trusted_ca on the primary node"
# Copy the bootstrap script from S3 (the step's own directory is its working directory) and run it.
_TRUST_COMMAND = 'aws s3 cp --only-show-errors "$0" install-openlineage.sh && exec bash install-openlineage.sh "$@"'


class AttachError(EmrLineageError):
    """A cluster attach or detach refuses (its state, release, configuration): exit 2, nothing changed."""


@dataclass(frozen=True)
class Attachment:
    """What attach added to one set's ``spark-defaults``, as it records it there."""

    env: str
    added: Mapping[str, str]  # key -> the value attach gave it (a secret's key as EMR shows it: unmarked)
    appended: Mapping[str, str]  # list property -> the item attach appended to it
    created: tuple[str, ...] = ()  # list properties attach put into the set's own configuration

    def value(self) -> str:
        record = {"env": self.env, "added": dict(self.added), "appended": dict(self.appended)}
        return json.dumps({**record, "created": list(self.created)}, sort_keys=True, separators=(",", ":"))

    @classmethod
    def parse(cls, text: str, where: str) -> Attachment:
        try:
            record = json.loads(text)
            attachment = cls(
                env=str(record["env"]),
                added={str(k): str(v) for k, v in record["added"].items()},
                appended={str(k): str(v) for k, v in record["appended"].items()},
                created=tuple(str(k) for k in record.get("created", [])),
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            raise AttachError(
                f"{where}: {ATTACHED_PROPERTY} is not what emr-lineage attach writes; "
                "fix or remove it with aws emr modify-instance-groups, then run the command again"
            ) from None
        return attachment


def check_cluster(cluster: Cluster) -> None:
    """A cluster attach can reconfigure: running, on a release with the listener's Spark, with Spark."""
    cid = cluster.cluster_id
    if cluster.state in ENDED_CLUSTER:
        raise AttachError(f"cluster {cid} is {cluster.state}: only a running cluster can be reconfigured")
    if cluster.state not in RUNNING_CLUSTER:
        raise AttachError(f"cluster {cid} is {cluster.state}: wait until it is WAITING or RUNNING, then run it again")
    if cluster.release_label not in EMR_RELEASES:
        raise AttachError(
            f"cluster {cid} runs {cluster.release_label or 'no known release'}; the pinned listener is built for "
            f"Spark 3.5 on Scala 2.12, which emr-lineage supports on {', '.join(EMR_RELEASES)}"
        )
    if "spark" not in {name.lower() for name in cluster.applications}:
        raise AttachError(f"cluster {cid} has no Spark application (it runs {', '.join(cluster.applications)})")


def check_sets(cluster: Cluster, sets: Iterable[InstanceSet]) -> None:
    """Every set ready for a reconfiguration (EMR runs one at a time, and none while resizing)."""
    listing = "list-instance-fleets" if cluster.collection == reconfigure.FLEETS else "list-instance-groups"
    follow = f"(aws emr {listing} --cluster-id {cluster.cluster_id})"
    for instance_set in sets:
        if instance_set.state == "RECONFIGURING":
            raise AttachError(f"another reconfiguration is in progress on {instance_set.label}: wait for it {follow}")
        if instance_set.state == "RESIZING":
            raise AttachError(f"{instance_set.label} is being resized: wait until it is RUNNING {follow}")
        if instance_set.state != reconfigure.READY:
            raise AttachError(f"{instance_set.label} is {instance_set.state}: it must be RUNNING {follow}")


def read_cluster(emr: Any, cluster_id: str) -> tuple[Cluster, list[InstanceSet]]:
    """The cluster and its live sets, checked."""
    cluster = reconfigure.describe_cluster(emr, cluster_id)
    check_cluster(cluster)
    sets = [s for s in reconfigure.instance_sets(emr, cluster) if s.state not in reconfigure.ENDED]
    check_sets(cluster, sets)
    return cluster, sets


def _defaults(configurations: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    return as_read(spark_defaults_of([dict(c) for c in configurations]))


def _with_defaults(configurations: Iterable[Mapping[str, Any]], properties: Mapping[str, str]) -> list[dict[str, Any]]:
    """``configurations`` with their ``spark-defaults`` properties replaced (an empty one dropped)."""
    result, found = [], False
    for configuration in configurations:
        item = copy.deepcopy(dict(configuration))
        if item.get("Classification") == SPARK_DEFAULTS and not found:
            found = True
            item["Properties"] = dict(properties)
            if not properties and not item.get("Configurations"):
                continue
        result.append(item)
    if not found and properties:
        result.append({"Classification": SPARK_DEFAULTS, "Properties": dict(properties)})
    return result


def detached(
    properties: Mapping[str, str], inherited: Mapping[str, str], where: str
) -> tuple[dict[str, str], list[str]]:
    """``properties`` (a set's spark-defaults, as read) without what its attachment records, and a note for
    each key left because it changed since."""
    props = dict(properties)
    attachment = Attachment.parse(props.pop(ATTACHED_PROPERTY), where)
    notes = []
    for key, value in attachment.added.items():
        if key in props and props[key] != value:
            notes.append(f"{where}: kept {key}, changed since attach")
        elif key in props:
            del props[key]
    for key, item in attachment.appended.items():
        if key not in props:
            continue
        rest = [i for i in list_items(props[key]) if i != item]
        if key in attachment.created and rest == list_items(inherited.get(key)):
            del props[key]  # the cluster's own value applies again
        else:
            props[key] = ",".join(rest)
    return props, notes


def attached(
    properties: Mapping[str, str],
    inherited: Mapping[str, str],
    ours: Mapping[str, str],
    *,
    env: str,
    append_listener: bool,
    where: str,
) -> dict[str, str]:
    """``properties`` (a set's spark-defaults, as read, without an earlier attachment) with ``ours`` merged in
    and the attachment recorded; a value of the cluster's that ours would replace is refused."""
    effective = {**inherited, **properties}
    scalars = {k: v for k, v in ours.items() if k not in LIST_PROPERTIES}
    conflicts = sorted(k for k, v in scalars.items() if k in effective and effective[k] != v)
    if conflicts:
        raise AttachError(
            f"{where} already sets {', '.join(conflicts)}: attach would replace them; "
            "remove them (or the listener configured with them) first"
        )
    listeners = list_items(effective.get(EXTRA_LISTENERS))
    if LISTENER_CLASS in listeners:
        raise AttachError(f"{where} already loads {LISTENER_CLASS} (spark.extraListeners), not through attach")
    if listeners and not append_listener:
        raise AttachError(
            f"{where} has spark.extraListeners={','.join(listeners)}: setting it would replace them; "
            "pass --append-listener to add the OpenLineage listener after them"
        )
    props = dict(properties)
    added = {k: v for k, v in scalars.items() if k not in effective}
    props.update(added)
    appended, created = {}, []
    for key in (k for k in LIST_PROPERTIES if k in ours):
        items = list_items(effective.get(key))
        if ours[key] in items:
            continue
        if key not in properties:
            created.append(key)
        props[key] = ",".join([*items, ours[key]])
        appended[key] = ours[key]
    props[ATTACHED_PROPERTY] = Attachment(env, added, appended, tuple(created)).value()
    return props


@dataclass(frozen=True)
class SetChange:
    instance_set: InstanceSet
    configurations: list[dict[str, Any]]  # as sent
    summary: str  # what changes in its spark-defaults
    notes: tuple[str, ...] = ()


def _summary(verb: tuple[str, str], attachment: Attachment) -> str:
    """``adds k1, k2; appends to spark.jars`` (``removes``/``takes out of`` for detach)."""
    parts = [f"{verb[0]} {', '.join(sorted(attachment.added))}"] if attachment.added else []
    if attachment.appended:
        parts.append(f"{verb[1]} {', '.join(attachment.appended)}")
    return "; ".join(parts) or "records the attachment"


@dataclass(frozen=True)
class ReconfigurationPlan:
    """The sets to reconfigure, their new configurations and the calls that send them."""

    cluster: Cluster
    sets: tuple[InstanceSet, ...]
    changes: tuple[SetChange, ...]
    calls: tuple[tuple[str, dict[str, Any]], ...]
    step: dict[str, Any] | None = None  # run on the primary node once the reconfiguration is applied

    @property
    def shown_calls(self) -> tuple[tuple[str, dict[str, Any]], ...]:
        """Every call the plan makes, the step's last."""
        if self.step is None:
            return self.calls
        return (*self.calls, ("AddJobFlowSteps", {"JobFlowId": self.cluster.cluster_id, "Steps": [self.step]}))

    @property
    def sent(self) -> dict[str, list[dict[str, Any]]]:
        return {c.instance_set.key: c.configurations for c in self.changes}

    @property
    def before(self) -> dict[str, int]:
        return {c.instance_set.key: c.instance_set.version for c in self.changes}

    @property
    def references(self) -> list[str]:
        """The cluster's own properties sent again as references to their secrets (EMR shows them unmarked)."""
        ours = f"{reconfigure.SECRET_KEY_PREFIX}spark.openlineage."
        return sorted(
            {k for c in self.changes for k in reconfigure.secret_references(c.configurations) if not k.startswith(ours)}
        )


def _plan(
    cluster: Cluster, sets: list[InstanceSet], changes: list[SetChange], step: dict[str, Any] | None = None
) -> ReconfigurationPlan:
    calls = reconfigure.requests(cluster, {c.instance_set.key: c.configurations for c in changes}, sets)
    return ReconfigurationPlan(cluster, tuple(sets), tuple(changes), tuple(calls), step if changes else None)


def trust_step(target: ListenerTarget) -> dict[str, Any] | None:
    """The step that imports ``openlineage.trusted_ca`` into the primary node's Java truststores with the
    bootstrap script staged in the artifacts bucket, run with the cluster's instance role; None without it."""
    if target.truststore is None or not target.trust_arguments:
        return None
    arguments = [f"s3://{target.bucket}/{BOOTSTRAP_SCRIPT_KEY}", *target.trust_arguments]
    return {
        "Name": TRUST_STEP_NAME,
        "ActionOnFailure": "CONTINUE",  # the cluster's work goes on; attach reports the failure
        "HadoopJarStep": {"Jar": COMMAND_RUNNER, "Args": ["bash", "-c", _TRUST_COMMAND, *arguments]},
    }


def plan_attach(
    cluster: Cluster,
    sets: list[InstanceSet],
    settings: EnvironmentSettings,
    target: ListenerTarget,
    *,
    append_listener: bool,
) -> ReconfigurationPlan:
    """Every set with the listener (a set attached before: attached again, so a new jar or URL replaces the
    old); a set already so configured is left out."""
    listener = ListenerConfig.for_settings(settings.openlineage, api_url=target.lineage_url)
    ours = cluster_listener_properties(listener, jar_uri=target.jar_uri, api_key_secret=target.api_key_secret)
    if target.truststore is not None:
        ours.update(cluster_mode_properties(target.truststore))
    ours = as_read(ours)
    inherited = _defaults(cluster.configurations)
    changes = []
    for instance_set in sets:
        props = _defaults(instance_set.configurations)
        if ATTACHED_PROPERTY in props:
            props, _ = detached(props, inherited, instance_set.label)
        new = attached(
            props, inherited, ours, env=settings.name, append_listener=append_listener, where=instance_set.label
        )
        configurations = as_sent(_with_defaults(instance_set.configurations, new))
        if configurations != as_sent(instance_set.configurations):
            summary = _summary(("adds", "appends to"), Attachment.parse(new[ATTACHED_PROPERTY], instance_set.label))
            changes.append(SetChange(instance_set, configurations, summary))
    return _plan(cluster, sets, changes, trust_step(target))


def plan_detach(cluster: Cluster, sets: list[InstanceSet]) -> ReconfigurationPlan:
    """Every attached set without what attach added; none attached is bad input."""
    inherited = _defaults(cluster.configurations)
    changes = []
    for instance_set in sets:
        props = _defaults(instance_set.configurations)
        if ATTACHED_PROPERTY not in props:
            continue
        attachment = Attachment.parse(props[ATTACHED_PROPERTY], instance_set.label)
        props, notes = detached(props, inherited, instance_set.label)
        configurations = as_sent(_with_defaults(instance_set.configurations, props))
        summary = _summary(("removes", "takes what it appended out of"), attachment)
        changes.append(SetChange(instance_set, configurations, summary, tuple(notes)))
    if not changes:
        raise AttachError(
            f"cluster {cluster.cluster_id} has nothing attached by emr-lineage "
            f"(no {ATTACHED_PROPERTY} in the spark-defaults of any of its instance groups or fleets)"
        )
    return _plan(cluster, sets, changes)


def shown(calls: Iterable[tuple[str, Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """The calls as they may be shown (dry runs): every credential of a configuration masked."""
    return [
        {"operation": operation, "request": _masked_tree(copy.deepcopy(dict(params)))} for operation, params in calls
    ]


def _masked_tree(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: (masked(v) if k == "Properties" else _masked_tree(v)) for k, v in node.items()}
    if isinstance(node, list):
        return [_masked_tree(item) for item in node]
    return node


def submit(emr: Any, plan: ReconfigurationPlan) -> None:
    """Send the plan's calls; an AWS error's message never carries a credential of the configurations."""
    try:
        reconfigure.submit(emr, list(plan.calls))
    except AwsError as exc:
        raise AwsError(scrubbed(str(exc), _secrets(plan.calls))) from None


def _secrets(calls: Iterable[tuple[str, Mapping[str, Any]]]) -> set[str]:
    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "Properties":
                    found.update(v for k, v in value.items() if v and masked({k: v})[k] == MASK)
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    for _, params in calls:
        walk(params)
    return found
