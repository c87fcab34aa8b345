"""docs/compliance.md's tables of acknowledged findings, read from the synthesized assemblies.

Each acknowledgement carries its reason into the assembly (stacks/shared/nag.py): cdk-nag's into the
stack's ``<stack>.metadata.json`` (``aws:cdk:acknowledged-rules``, by construct path), checkov's into
the resource's ``Metadata.checkov.skip``; cfn-lint's ignores are in ``Metadata.cfn-lint``, their
reasons beside them in ``Metadata.cfn-lint-reasons``. The tables cover every configuration the tests
synthesize (tests/stacks/variants.py).

``python -m tests.stacks.compliance_doc`` synthesizes those configurations (into ``EMR_LINEAGE_SYNTH_CACHE``
when set) and rewrites the tables between the markers of docs/compliance.md; the prose around them is
written by hand. tests/stacks/test_compliance.py checks that the committed tables are current.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from stacks.shared.nag import CFN_LINT_METADATA, CFN_LINT_REASONS_METADATA
from tests.paths import REPO_ROOT
from tests.stacks.synth_cache import CACHE_ENV, AssemblyCache, Synth
from tests.stacks.variants import all_variants, cdk_json_context

DOC = REPO_ROOT / "docs" / "compliance.md"
COMMAND = "python -m tests.stacks.compliance_doc"
BEGIN = "<!-- BEGIN GENERATED {name} by `" + COMMAND + "`: edit the reasons in the stacks, not here -->"
END = "<!-- END GENERATED {name} -->"
ACKNOWLEDGED = "aws:cdk:acknowledged-rules"
NAG_PREFIX = "Annotation::AwsSolutions-"
# checkov's titles of the checks acknowledged (the id alone for one not listed).
CHECKOV_TITLES = {
    "CKV_AWS_2": "ALB listener uses HTTPS",
    "CKV_AWS_18": "S3 bucket access logging",
    "CKV_AWS_103": "ALB listener uses TLS 1.2",
    "CKV_AWS_115": "Lambda reserved concurrency",
    "CKV_AWS_116": "Lambda dead-letter queue",
    "CKV_AWS_117": "Lambda inside a VPC",
    "CKV_AWS_157": "RDS Multi-AZ",
    "CKV_AWS_161": "RDS IAM authentication",
    "CKV_AWS_173": "Lambda environment encrypted with a customer key",
}
# Constructs CDK makes for itself, by the start of their id.
CDK_SINGLETONS = {
    "Custom::CDKBucketDeployment": "CDK's BucketDeployment provider",
    "AWS679f53fac002430cb0da5b7982bd2287": "CDK's AwsCustomResource provider",
}
# A logical id's hash suffix, and an import of another stack's bucket ARN, as cdk-nag names them.
_HASHED = re.compile(r"<(\w+?)[0-9A-F]{8}([.>])")
_IMPORT = re.compile(r"EmrLineage-\w+-(\w+):ExportsOutputFnGetAtt(\w+?)[0-9A-F]{8}Arn[0-9A-F]{8}")


def _resource(path: str) -> str:
    """``Gateway: IngestFunction/Ingest`` from ``/EmrLineage-dev-Gateway/IngestFunction/Ingest/Resource``."""
    stack, _, inner = path.strip("/").partition("/")
    stack = stack.rsplit("-", 1)[-1]
    inner = inner.removesuffix("/Resource")
    for prefix, name in CDK_SINGLETONS.items():
        if inner.startswith(prefix):
            inner = name
    return f"{stack}: {inner}" if inner else stack


def _finding(text: str, env: str) -> str:
    """A cdk-nag finding's detail, the same for every environment: hashes and the environment's name out."""
    text = _IMPORT.sub(r"<\1 \2.Arn>", text)
    return _HASHED.sub(r"<\1\2", text).replace(f"_{env}_", "_<env>_")


class _Rows:
    """(tool, resource, rule, reason) -> finding -> the variants it is acknowledged in."""

    def __init__(self) -> None:
        self.found: dict[tuple[str, str, str, str], dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))

    def add(self, tool: str, resource: str, rule: str, finding: str, reason: str, variant: str) -> None:
        self.found[(tool, resource, rule, " ".join(reason.split()))][finding].add(variant)


def _read(rows: _Rows, variant: str, synth: Synth) -> None:
    for stack_name in synth.stack_names.values():
        metadata = json.loads((synth.outdir / f"{stack_name}.metadata.json").read_text())
        paths = {
            e["data"]: path for path, entries in metadata.items() for e in entries if e["type"] == "aws:cdk:logicalId"
        }
        for path, entries in metadata.items():
            for entry in entries:
                if entry["type"] != ACKNOWLEDGED:
                    continue
                for rule, reason in entry["data"].items():
                    if rule.startswith(NAG_PREFIX):
                        name, _, detail = rule.removeprefix(NAG_PREFIX).partition("[")
                        finding = _finding(detail.removesuffix("]"), synth.env)
                        reason = reason.replace(f"emr_lineage_{synth.env}_", "emr_lineage_<env>_")
                        rows.add("cdk-nag", _resource(path), name, finding, reason, variant)
        template = json.loads((synth.outdir / f"{stack_name}.template.json").read_text())
        for logical_id, resource in template["Resources"].items():
            where = _resource(paths[logical_id])
            meta = resource.get("Metadata", {})
            for skip in meta.get("checkov", {}).get("skip", []):
                rows.add("checkov", where, skip["id"], "", skip["comment"], variant)
            reasons = meta.get(CFN_LINT_REASONS_METADATA, {})
            for check in meta.get(CFN_LINT_METADATA, {}).get("config", {}).get("ignore_checks", []):
                if check not in reasons:
                    raise ValueError(
                        f"{where}: cfn-lint {check} is ignored without a reason: use nag.acknowledge_cfn_lint"
                    )
                rows.add("cfn-lint", where, check, "", reasons[check], variant)


def _variants(found: set[str], every: list[str]) -> str:
    return "all" if len(found) == len(every) else ", ".join(v for v in every if v in found)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _table(rows: _Rows, tool: str, every: list[str]) -> str:
    what = "Rule" if tool == "cdk-nag" else "Check"
    lines = [f"| {what} | Resource | Configurations | Reason |", "|---|---|---|---|"]
    for (kind, resource, rule, reason), findings in sorted(rows.found.items()):
        if kind != tool:
            continue
        by_variants: dict[str, list[str]] = defaultdict(list)
        for finding, variants in sorted(findings.items()):
            by_variants[_variants(variants, every)].append(finding)
        for variants, details in sorted(by_variants.items()):
            name = rule
            if tool == "checkov" and rule in CHECKOV_TITLES:
                name = f"{rule} ({CHECKOV_TITLES[rule]})"
            if any(details):
                name += " " + ", ".join(f"`{_cell(d)}`" for d in details)
            lines.append(f"| {name} | {resource} | {variants} | {_cell(reason)} |")
    return "\n".join(lines)


def render(synths: dict[str, Synth]) -> dict[str, str]:
    """Each generated section of docs/compliance.md by name: ``cdk-nag``, ``cfn-lint``, ``checkov``."""
    rows = _Rows()
    for variant, synth in synths.items():
        _read(rows, variant, synth)
    every = list(synths)
    return {tool: _table(rows, tool, every) for tool in ("cdk-nag", "cfn-lint", "checkov")}


def fill(document: str, sections: dict[str, str]) -> str:
    """``document`` with each generated section between its markers replaced by ``sections``'."""
    for name, body in sections.items():
        begin, end = BEGIN.format(name=name), END.format(name=name)
        start, stop = document.index(begin) + len(begin), document.index(end)
        document = f"{document[:start]}\n{body}\n{document[stop:]}"
    return document


def main() -> int:
    os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
    with tempfile.TemporaryDirectory() as scratch:
        cache = AssemblyCache(Path(os.environ.get(CACHE_ENV) or scratch))
        synths = cache.ensure(all_variants(cdk_json_context(REPO_ROOT)))
        DOC.write_text(fill(DOC.read_text(encoding="utf-8"), render(synths)), encoding="utf-8")
    print(f"wrote {DOC.relative_to(REPO_ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
