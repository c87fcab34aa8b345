#!/usr/bin/env bash
# Download the third-party reference data the tests read (OpenLineage schemas and fixtures, Marquez
# replies) from their public repositories, at the pinned commits of .github/reference-files.tsv,
# into $EMR_LINEAGE_REFERENCE (default: ../shared/reference beside the checkout). Each file's
# SHA-256 is checked; a file already there with the right checksum is kept. Never committed here.
#
#   .github/fetch-reference.sh                 # fills ../shared/reference
#   EMR_LINEAGE_REFERENCE=/tmp/ref .github/fetch-reference.sh
#
# REFERENCE_RAW_BASE replaces https://raw.githubusercontent.com (a mirror, or a local server in tests).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo_root="$(dirname "$here")"
list="$here/reference-files.tsv"
dest="${EMR_LINEAGE_REFERENCE:-$repo_root/../shared/reference}"
raw_base="${REFERENCE_RAW_BASE:-https://raw.githubusercontent.com}"
python="${PYTHON:-python3}"

sha256() { sha256sum "$1" | cut -d' ' -f1; }

# The JSON code block under a Markdown heading, re-indented (json.dumps(indent=2), no final newline).
extract_block() {
  "$python" - "$1" "$2" <<'PY'
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
heading = sys.argv[2]
starts = [i for i, line in enumerate(lines) if line.startswith("#") and line.lstrip("#").strip() == heading]
if len(starts) != 1:
    sys.exit(f"{sys.argv[1]}: expected one heading {heading!r}, found {len(starts)}")
fence = next(i for i in range(starts[0] + 1, len(lines)) if lines[i].startswith("```"))
end = next(i for i in range(fence + 1, len(lines)) if lines[i].startswith("```"))
sys.stdout.write(json.dumps(json.loads("\n".join(lines[fence + 1 : end])), indent=2))
PY
}

mkdir -p "$dest"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fetched=0 kept=0
while IFS=$'\t' read -r local repo commit path expected extract; do
  [[ -z "$local" || "$local" == \#* ]] && continue
  target="$dest/$local"
  if [[ -f "$target" && "$(sha256 "$target")" == "$expected" ]]; then
    kept=$((kept + 1))
    continue
  fi
  url="$raw_base/$repo/$commit/$path"
  download="$work/download"
  curl --fail --silent --show-error --location --retry 3 --retry-connrefused --max-time 60 \
    --output "$download" "$url" || { echo "error: cannot download $url" >&2; exit 1; }
  if [[ "$extract" != "-" ]]; then
    extract_block "$download" "$extract" >"$work/extracted" || { echo "error: $url: no JSON block under '$extract'" >&2; exit 1; }
    mv "$work/extracted" "$download"
  fi
  actual="$(sha256 "$download")"
  if [[ "$actual" != "$expected" ]]; then
    echo "error: $local from $url: SHA-256 $actual, expected $expected" >&2
    exit 1
  fi
  mkdir -p "$(dirname "$target")"
  mv -f "$download" "$target"
  fetched=$((fetched + 1))
done <"$list"
echo "reference data in $dest: $fetched fetched, $kept already there"
