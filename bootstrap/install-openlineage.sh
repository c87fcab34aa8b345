#!/usr/bin/env bash
# EMR bootstrap action: install the pinned OpenLineage Spark listener on this node.
#
# Bootstrap actions run before EMR installs Spark, so the jar is fetched and verified now
# (failing the node, and so the cluster, if that is impossible) and put into Spark's own jar
# directory (/usr/lib/spark/jars) as soon as Spark's package creates it, by a small watcher
# this script starts. Jars in that directory are on the driver's and the executors'
# classpath without touching spark.driver/executor.extraClassPath, whose EMR defaults a
# spark-defaults entry would replace. The watcher also keeps a single listener jar on the
# classpath when the EMR release ships its own (7.11+). docs/listener.md explains the choice.
#
# With --api-key-secret (the lineage gateway is deployed), the script also reads the gateway's
# API key from Secrets Manager with the node's instance role, now (so a missing permission fails
# the bootstrap), and the watcher adds the listener's api_key auth to spark-defaults.conf once EMR
# has written it; the key itself never reaches the cluster's configuration, the bootstrap's
# arguments or a log. docs/gateway.md explains the trade-off (the key is readable on the node).
#
# With --trusted-ca-uri and --trusted-ca-sha256 (a PEM bundle in S3) or --trusted-ca-arn (an AWS Private
# CA), the script fetches the CA that issued the load balancer's certificate, refuses a bundle whose SHA-256
# is not the pinned one (as it refuses such a jar) or that holds anything but certificates, and imports each
# certificate into the truststore (cacerts) of every JDK under /usr/lib/jvm, under an alias of its
# fingerprint: a second run changes nothing, a new CA adds its alias. The watcher imports again once EMR has
# configured Spark, for a JDK that came or was rewritten after the bootstrap. docs/deploy-into-existing.md.
# With --trusted-ca-only it does that alone, at once, on a node whose Spark is configured (the step
# `emr-lineage attach` adds to a running cluster): no jar, no key, no watcher; any failure exits non-zero.
#
# Run with --help for the options. Environment: EMR_NODE_ROOT (default /) prefixes every node
# path (tests run the script in a sandbox tree); AWS_ENDPOINT_URL is honoured by the AWS CLI;
# EMR_LINEAGE_POLL_SECONDS is the watcher's poll interval (default 2).
set -Eeuo pipefail
shopt -s nullglob

readonly PROG=install-openlineage
readonly LISTENER_CLASS=io.openlineage.spark.agent.OpenLineageSparkListener
readonly DISABLED_SUFFIX=.disabled-by-emr-lineage
# The OpenLineage HTTP transport's api_key auth (sent as "Authorization: Bearer <key>"):
# https://openlineage.io/docs/integrations/spark/configuration/transport
readonly AUTH_TYPE_PROPERTY=spark.openlineage.transport.auth.type
readonly AUTH_KEY_PROPERTY=spark.openlineage.transport.auth.apiKey
readonly TRANSPORT_URL_PROPERTY=spark.openlineage.transport.url
# A secret holding a JSON object keeps the key under this field (as the gateway reads it).
readonly SECRET_JSON_FIELD=apiKey
# The JDK cacerts' well-known password (it guards nothing: the store holds public certificates only).
readonly TRUSTSTORE_PASSWORD=changeit
readonly CA_ALIAS_PREFIX=emr-lineage-ca-

usage() {
  cat <<'EOF'
Usage: install-openlineage.sh --jar-uri s3://BUCKET/KEY.jar --sha256 HEX [options]
       install-openlineage.sh --trusted-ca-only (--trusted-ca-uri URI --trusted-ca-sha256 HEX | --trusted-ca-arn ARN)

Installs the OpenLineage Spark listener jar on an EMR node (bootstrap action).

Required:
  --jar-uri URI           S3 URI of the staged listener jar (emr-lineage listener stage)
  --sha256 HEX            its SHA-256 (64 lowercase hex digits) as pinned in cdk.json;
                          "unpinned" makes the script stop: pin it first
Options:
  --listener-source S     bundle (default): install this jar and disable EMR's own
                          OpenLineage jar; emr: use EMR's jar (EMR 7.11+), install nothing
  --fail-closed           on any failure exit non-zero so the cluster fails (default)
  --fail-open             on failure log a WARNING, exit 0 and run Spark without lineage
  --emr-release LABEL     release label, e.g. emr-7.13.0 (default: read from the node)
  --region REGION         AWS region of the bucket (default: AWS_REGION, then the node's
                          instance data)
  --attempts N            S3 download attempts (default 5)
  --retry-delay SECONDS   first retry delay, doubled after each attempt (default 2)
  --watch-timeout SECONDS how long the watcher waits for Spark / EMR's jar (default 1800)
  --api-key-secret ARN    Secrets Manager secret with the lineage gateway's API key: the
                          listener sends it as a Bearer token (api_key auth in spark-defaults)
  --trusted-ca-uri URI    S3 URI of a PEM bundle of the CA(s) that issued the load balancer's
                          certificate: imported into every JDK's truststore (cacerts)
  --trusted-ca-sha256 HEX the bundle's SHA-256 (required with --trusted-ca-uri): any other
                          content is refused, nothing is imported
  --trusted-ca-arn ARN    an AWS Private CA instead: its certificate and chain are imported
  --trusted-ca-only       import the CA now and do nothing else (a running node: no jar,
                          no key, no watcher; a failure exits non-zero)
  -h, --help              show this help
EOF
}

# ---- paths (all under EMR_NODE_ROOT) -----------------------------------------------------------
NODE_ROOT=${EMR_NODE_ROOT:-/}
ROOT=${NODE_ROOT%/}
SPARK_JARS_DIR=$ROOT/usr/lib/spark/jars
EMR_LISTENER_DIR=$ROOT/usr/share/aws/datazone-openlineage-spark/lib
SPARK_DEFAULTS=$ROOT/etc/spark/conf/spark-defaults.conf
INSTANCE_DATA=$ROOT/mnt/var/lib/info/extraInstanceData.json
INSTALL_DIR=$ROOT/usr/local/lib/emr-lineage
JVM_DIR=$ROOT/usr/lib/jvm
TRUSTED_CA_FILE=$INSTALL_DIR/trusted-ca.pem
STATE_DIR=$ROOT/var/lib/emr-lineage
LOG_DIR=$ROOT/var/log/emr-lineage
LOG_FILE=$LOG_DIR/install-openlineage.log
WATCHER_PID_FILE=$STATE_DIR/watcher.pid
POLL_SECONDS=${EMR_LINEAGE_POLL_SECONDS:-2}

# ---- settings ----------------------------------------------------------------------------------
JAR_URI=""
SHA256=""
LISTENER_SOURCE=bundle
FAIL_OPEN=false
EMR_RELEASE=""
REGION=""
ATTEMPTS=5
RETRY_DELAY=2
WATCH_TIMEOUT=1800
API_KEY_SECRET=""
API_KEY=""  # read from API_KEY_SECRET; never logged, never exported
TRUSTED_CA_URI=""
TRUSTED_CA_SHA256=""
TRUSTED_CA_ARN=""
TRUSTED_CA_SOURCE=""  # the URI or the ARN, for messages
TRUST_PENDING=false  # the watcher imports the CA again once EMR has configured Spark
TRUST_NOTE=""
IN_WATCHER=false
TRUST_ONLY=false

# ---- output ------------------------------------------------------------------------------------
log() {
  local line="$PROG: $*"
  if [[ $IN_WATCHER == true ]]; then
    printf '%s %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$line"  # stdout is the log file
  else
    printf '%s\n' "$line"
    printf '%s %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$line" >>"$LOG_FILE" 2>/dev/null || true
  fi
}

usage_error() {
  printf '%s: ERROR: %s (see --help)\n' "$PROG" "$1" >&2
  exit 2
}

# The one failure exit: one line on stderr, or a warning and exit 0 with --fail-open.
fail() {
  trap - ERR
  if [[ $FAIL_OPEN == true ]]; then
    local line="$PROG: WARNING: $1; continuing WITHOUT lineage (--fail-open)"
    printf '%s\n' "$line" >&3
    printf '%s %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$line" >>"$LOG_FILE" 2>/dev/null || true
    start_watcher neutralize || true
    exit 0
  fi
  local line="$PROG: ERROR: $1"
  printf '%s\n' "$line" >&3
  printf '%s %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$line" >>"$LOG_FILE" 2>/dev/null || true
  exit 1
}

on_unexpected_error() {
  fail "unexpected failure (exit $1) at line $2: $3"
}

# ---- arguments ---------------------------------------------------------------------------------
need_value() { [[ $# -ge 2 && -n $2 ]] || usage_error "$1 needs a value"; }

parse_args() {
  while [[ $# -gt 0 ]]; do
    case $1 in
      --jar-uri) need_value "$@"; JAR_URI=$2; shift 2 ;;
      --sha256) need_value "$@"; SHA256=$2; shift 2 ;;
      --listener-source) need_value "$@"; LISTENER_SOURCE=$2; shift 2 ;;
      --fail-open) FAIL_OPEN=true; shift ;;
      --fail-closed) FAIL_OPEN=false; shift ;;
      --emr-release) need_value "$@"; EMR_RELEASE=$2; shift 2 ;;
      --region) need_value "$@"; REGION=$2; shift 2 ;;
      --attempts) need_value "$@"; ATTEMPTS=$2; shift 2 ;;
      --retry-delay) need_value "$@"; RETRY_DELAY=$2; shift 2 ;;
      --watch-timeout) need_value "$@"; WATCH_TIMEOUT=$2; shift 2 ;;
      --api-key-secret) need_value "$@"; API_KEY_SECRET=$2; shift 2 ;;
      --trusted-ca-uri) need_value "$@"; TRUSTED_CA_URI=$2; shift 2 ;;
      --trusted-ca-sha256) need_value "$@"; TRUSTED_CA_SHA256=$2; shift 2 ;;
      --trusted-ca-arn) need_value "$@"; TRUSTED_CA_ARN=$2; shift 2 ;;
      --trusted-ca-only) TRUST_ONLY=true; shift ;;
      -h | --help) usage; exit 0 ;;
      *) usage_error "unknown argument '$1'" ;;
    esac
  done
  if [[ $TRUST_ONLY == true ]]; then
    [[ -z $JAR_URI && -z $SHA256 && -z $API_KEY_SECRET ]] \
      || usage_error "--trusted-ca-only imports the CA alone: no --jar-uri, --sha256 or --api-key-secret"
    check_trusted_ca_args
    [[ -n $TRUSTED_CA_SOURCE ]] || usage_error "--trusted-ca-only needs --trusted-ca-uri (with --trusted-ca-sha256) or --trusted-ca-arn"
    FAIL_OPEN=false  # a step that did not import must fail, so that attach says so
    return 0
  fi
  [[ -n $JAR_URI ]] || usage_error "--jar-uri is required"
  [[ $JAR_URI =~ ^s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]/.+\.jar$ ]] \
    || usage_error "--jar-uri '$JAR_URI' is not an s3://bucket/key.jar URI"
  [[ -n $SHA256 ]] || usage_error "--sha256 is required"
  [[ $SHA256 =~ ^[0-9a-f]{64}$ || $SHA256 == unpinned ]] \
    || usage_error "--sha256 '$SHA256' is not 64 lowercase hex digits"
  [[ $LISTENER_SOURCE == bundle || $LISTENER_SOURCE == emr ]] \
    || usage_error "--listener-source '$LISTENER_SOURCE' must be bundle or emr"
  [[ -z $EMR_RELEASE || $EMR_RELEASE =~ ^emr-[0-9]+\.[0-9]+\.[0-9]+$ ]] \
    || usage_error "--emr-release '$EMR_RELEASE' is not a release label like emr-7.13.0"
  [[ $ATTEMPTS =~ ^[1-9][0-9]*$ ]] || usage_error "--attempts '$ATTEMPTS' must be a positive integer"
  [[ $RETRY_DELAY =~ ^[0-9]+(\.[0-9]+)?$ ]] || usage_error "--retry-delay '$RETRY_DELAY' must be a number of seconds"
  [[ $WATCH_TIMEOUT =~ ^[1-9][0-9]*$ ]] || usage_error "--watch-timeout '$WATCH_TIMEOUT' must be a positive integer"
  [[ -z $API_KEY_SECRET || $API_KEY_SECRET =~ ^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:.+$ ]] \
    || usage_error "--api-key-secret '$API_KEY_SECRET' is not a Secrets Manager secret ARN"
  check_trusted_ca_args
  JAR_NAME=${JAR_URI##*/}
}

check_trusted_ca_args() {
  # No * or ? in the key: the instance role's policy names the object, and IAM reads them as wildcards.
  [[ -z $TRUSTED_CA_URI || $TRUSTED_CA_URI =~ ^s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]/[^[:space:]*?]+$ ]] \
    || usage_error "--trusted-ca-uri '$TRUSTED_CA_URI' is not an s3://bucket/key URI"
  [[ -z $TRUSTED_CA_SHA256 || $TRUSTED_CA_SHA256 =~ ^[0-9a-f]{64}$ ]] \
    || usage_error "--trusted-ca-sha256 '$TRUSTED_CA_SHA256' is not 64 lowercase hex digits"
  [[ -z $TRUSTED_CA_URI || -n $TRUSTED_CA_SHA256 ]] \
    || usage_error "--trusted-ca-uri needs --trusted-ca-sha256 (the bundle's SHA-256)"
  [[ -z $TRUSTED_CA_SHA256 || -n $TRUSTED_CA_URI ]] || usage_error "--trusted-ca-sha256 goes with --trusted-ca-uri"
  [[ -z $TRUSTED_CA_ARN || $TRUSTED_CA_ARN =~ ^arn:aws[a-z-]*:acm-pca:[a-z0-9-]+:[0-9]{12}:certificate-authority/[0-9a-f-]{36}$ ]] \
    || usage_error "--trusted-ca-arn '$TRUSTED_CA_ARN' is not an AWS Private CA ARN"
  [[ -z $TRUSTED_CA_ARN || -z $TRUSTED_CA_URI ]] \
    || usage_error "--trusted-ca-arn and --trusted-ca-uri name two CAs: give one"
  TRUSTED_CA_SOURCE=${TRUSTED_CA_URI:-$TRUSTED_CA_ARN}
}

# ---- node facts --------------------------------------------------------------------------------
instance_data_field() {  # $1 = key in extraInstanceData.json (flat string values)
  [[ -r $INSTANCE_DATA ]] || return 0
  # First match only; no "| head", which could SIGPIPE sed under pipefail.
  sed -n "/\"$1\"[[:space:]]*:/{s/.*\"$1\"[[:space:]]*:[[:space:]]*\"\\([^\"]*\\)\".*/\\1/p;q;}" "$INSTANCE_DATA"
}

# yes / no / unknown: does this release ship its own OpenLineage jar (EMR 7.11+)?
emr_ships_listener() {
  if [[ $EMR_RELEASE =~ ^emr-([0-9]+)\.([0-9]+)\.[0-9]+$ ]]; then
    local major=${BASH_REMATCH[1]} minor=${BASH_REMATCH[2]}
    if (( major > 7 || (major == 7 && minor >= 11) )); then echo yes; else echo no; fi
  else
    echo unknown
  fi
}

sha256_of() { sha256sum "$1" | cut -d' ' -f1; }

has_jar() {  # $1 = path, $2 = expected sha256
  [[ -f $1 ]] && [[ $(sha256_of "$1") == "$2" ]]
}

# ---- actions -----------------------------------------------------------------------------------
# Run the AWS CLI with retries and exponential backoff. $1 names the action for the log; the
# rest are the CLI's arguments. Stdout lands in AWS_STDOUT (never logged: it may be a secret),
# the last line of the last error in LAST_AWS_ERROR. AWS_CALL_REGION, when set, replaces REGION for the call.
aws_with_retries() {
  local what=$1 attempt=1 delay=$RETRY_DELAY errors=$STATE_DIR/aws-errors.txt region=${AWS_CALL_REGION:-$REGION}
  shift
  local -a region_args=()
  [[ -n $region ]] && region_args=(--region "$region")
  while true; do
    if AWS_STDOUT=$(aws "${region_args[@]}" "$@" 2>"$errors"); then
      rm -f "$errors"
      return 0
    fi
    LAST_AWS_ERROR=$(sed '/^[[:space:]]*$/d' "$errors" | tail -n 1)
    rm -f "$errors"
    if (( attempt >= ATTEMPTS )); then
      return 1
    fi
    log "$what attempt $attempt/$ATTEMPTS failed (${LAST_AWS_ERROR}); retrying in ${delay}s"
    sleep "$delay"
    delay=$(awk -v d="$delay" 'BEGIN { print d * 2 }')
    attempt=$((attempt + 1))
  done
}

fetch_jar() {  # download JAR_URI to $1
  aws_with_retries download s3 cp --only-show-errors --no-progress "$JAR_URI" "$1"
}

# Read the gateway's API key into API_KEY: the secret string, or its apiKey field when the
# secret is a JSON object. Fails the node (or, fail-open, lineage) when it cannot.
read_api_key() {
  # The secret may be in another region than the cluster (a spoke's, in its hub's region): its ARN says which.
  AWS_CALL_REGION=$(cut -d: -f4 <<<"$API_KEY_SECRET") aws_with_retries "secret read" \
    secretsmanager get-secret-value --secret-id "$API_KEY_SECRET" \
    --query SecretString --output text \
    || fail "could not read the gateway API key from $API_KEY_SECRET after $ATTEMPTS attempts: ${LAST_AWS_ERROR:-no error text} (does the instance role have secretsmanager:GetSecretValue on it?)"
  local value=$AWS_STDOUT
  if [[ $value == \{* ]]; then
    value=$(printf '%s' "$value" | python3 -c '
import json, sys
try:
    field = json.load(sys.stdin).get(sys.argv[1])
except (ValueError, AttributeError):
    field = None
print(field if isinstance(field, str) else "")' "$SECRET_JSON_FIELD") || value=""
    [[ -n $value ]] || fail "the secret $API_KEY_SECRET is a JSON object without a string '$SECRET_JSON_FIELD' field"
  fi
  # Token characters only (RFC 6750 b64token): it goes into a properties file and a header.
  [[ $value =~ ^[A-Za-z0-9._~+/=-]+$ ]] \
    || fail "the API key in $API_KEY_SECRET is empty or has characters a Bearer token cannot carry (spaces, quotes, newlines...)"
  API_KEY=$value
  log "read the gateway API key from $API_KEY_SECRET"
}

# ---- the trusted CA ----------------------------------------------------------------------------
# Fetch the CA named by --trusted-ca-uri/--trusted-ca-arn into TRUSTED_CA_FILE, verified: the pinned
# SHA-256 of a bundle, certificates only. Fails the node (or, fail-open, lineage) when it cannot.
fetch_trusted_ca() {
  local download=$TRUSTED_CA_FILE.download
  mkdir -p "$INSTALL_DIR"
  rm -f "$download"
  if [[ -n $TRUSTED_CA_URI ]]; then
    if [[ -f $TRUSTED_CA_FILE && $(sha256_of "$TRUSTED_CA_FILE") == "$TRUSTED_CA_SHA256" ]]; then
      log "$TRUSTED_CA_FILE already holds the pinned bundle of $TRUSTED_CA_URI, not downloading"
      return 0
    fi
    if ! aws_with_retries "CA bundle download" s3 cp --only-show-errors --no-progress "$TRUSTED_CA_URI" "$download"; then
      rm -f "$download"
      fail "could not download the trusted CA bundle $TRUSTED_CA_URI after $ATTEMPTS attempts: ${LAST_AWS_ERROR:-no error text} (does the instance role have s3:GetObject on it?)"
    fi
    local actual
    actual=$(sha256_of "$download")
    if [[ $actual != "$TRUSTED_CA_SHA256" ]]; then
      rm -f "$download"
      fail "SHA-256 mismatch for the trusted CA bundle $TRUSTED_CA_URI: got $actual, expected $TRUSTED_CA_SHA256 (openlineage.trusted_ca.sha256); nothing imported"
    fi
  else
    # The CA may be in another region than the cluster: its ARN says which.
    AWS_CALL_REGION=$(cut -d: -f4 <<<"$TRUSTED_CA_ARN") aws_with_retries "CA certificate read" \
      acm-pca get-certificate-authority-certificate --certificate-authority-arn "$TRUSTED_CA_ARN" --output json \
      || fail "could not read the certificate of $TRUSTED_CA_ARN after $ATTEMPTS attempts: ${LAST_AWS_ERROR:-no error text} (does the instance role have acm-pca:GetCertificateAuthorityCertificate on it, and is the CA shared with this account?)"
    # The CA's certificate, then the chain above it (none for a root CA).
    printf '%s' "$AWS_STDOUT" | python3 -c '
import json, sys
answer = json.load(sys.stdin)
for part in (answer.get("Certificate"), answer.get("CertificateChain")):
    if part:
        print(part.strip())' >"$download" 2>/dev/null \
      || { rm -f "$download"; fail "the answer of GetCertificateAuthorityCertificate for $TRUSTED_CA_ARN is not the JSON it should be"; }
  fi
  check_ca_bundle "$download"
  if cmp -s "$download" "$TRUSTED_CA_FILE"; then
    rm -f "$download"
    log "$TRUSTED_CA_FILE already holds the certificates of $TRUSTED_CA_SOURCE"
    return 0
  fi
  chmod 0644 "$download"
  mv -f "$download" "$TRUSTED_CA_FILE"
  log "fetched and verified $TRUSTED_CA_SOURCE ($(grep -c -- '-----BEGIN CERTIFICATE-----' "$TRUSTED_CA_FILE") certificate(s)) to $TRUSTED_CA_FILE"
}

# A bundle holds PEM certificates and nothing to keep secret; its content is never printed.
check_ca_bundle() {  # $1 = the fetched bundle
  if grep -Eq -- '-----BEGIN ([A-Z0-9]+ )*PRIVATE KEY-----' "$1"; then
    rm -f "$1"
    fail "the trusted CA bundle $TRUSTED_CA_SOURCE holds a private key: refused, nothing imported (it must hold CA certificates only; replace it, and its pin)"
  fi
  if ! grep -q -- '-----BEGIN CERTIFICATE-----' "$1"; then
    rm -f "$1"
    fail "the trusted CA bundle $TRUSTED_CA_SOURCE holds no PEM certificate (-----BEGIN CERTIFICATE-----); nothing imported"
  fi
}

# Every JDK's truststore under /usr/lib/jvm, once (aliases of a JDK and symlinked stores lead to one file),
# each with the keytool of its JDK (else the one on PATH): "store<TAB>keytool" lines.
java_truststores() {
  local jdk store tool seen=" " fallback
  fallback=$(command -v keytool || true)
  for jdk in "$JVM_DIR"/*/; do
    for store in "$jdk"lib/security/cacerts "$jdk"jre/lib/security/cacerts; do
      [[ -f $store ]] || continue
      store=$(readlink -f "$store")
      [[ $seen == *" $store "* ]] && continue
      seen+="$store "
      tool=$jdk/bin/keytool
      [[ -x $tool ]] || tool=$fallback
      printf '%s\t%s\n' "$store" "$tool"
    done
  done
}

# One PEM file per certificate of the verified bundle in $1 (a directory), named by its alias: the prefix and
# the start of the certificate's SHA-256 fingerprint, so the same certificate always has the same alias.
split_ca_bundle() {
  local dir=$1 pem digest
  awk -v dir="$dir" '
    /-----BEGIN CERTIFICATE-----/ { n++; file = sprintf("%s/part-%03d", dir, n); inside = 1 }
    inside { print > file }
    /-----END CERTIFICATE-----/ { inside = 0; close(file) }' "$TRUSTED_CA_FILE"
  for pem in "$dir"/part-*; do
    digest=$(sed '/-----/d' "$pem" | base64 -d 2>/dev/null | sha256sum) || return 1
    mv -f "$pem" "$dir/$CA_ALIAS_PREFIX${digest:0:16}.pem"
  done
}

# Import into the truststore $1 (with keytool $2) each certificate of $3 (split_ca_bundle's directory) it
# lacks. A store that has them all is not written; one that lacks some is replaced whole (a copy, imported
# into, renamed over it), so a JVM starting meanwhile never reads half a store. LAST_KEYTOOL_ERROR on failure.
import_into_truststore() {
  local store=$1 tool=$2 dir=$3 listed pem alias tmp="" output
  local -a added=()
  if [[ -z $tool ]]; then
    LAST_KEYTOOL_ERROR="no keytool (neither in the JDK nor on PATH)"
    return 1
  fi
  if ! listed=$("$tool" -list -keystore "$store" -storepass "$TRUSTSTORE_PASSWORD" 2>&1); then
    LAST_KEYTOOL_ERROR=$(tail -n 1 <<<"$listed")
    return 1
  fi
  for pem in "$dir"/*.pem; do
    alias=$(basename "$pem" .pem)
    grep -q "^$alias," <<<"$listed" && continue
    if [[ -z $tmp ]]; then
      tmp=$store.emr-lineage.tmp
      cp -p "$store" "$tmp"
    fi
    if ! output=$("$tool" -importcert -noprompt -alias "$alias" -file "$pem" -keystore "$tmp" \
      -storepass "$TRUSTSTORE_PASSWORD" 2>&1); then
      rm -f "$tmp"
      LAST_KEYTOOL_ERROR=$(tail -n 1 <<<"$output")
      return 1
    fi
    added+=("$alias")
  done
  [[ -n $tmp ]] || return 0
  replace_file "$tmp" "$store"
  log "added ${added[*]} ($TRUSTED_CA_SOURCE) to the truststore $store"
  CHANGED=true
}

# Import the verified bundle into every Java truststore there is now. Returns 1 with the reason in
# TRUST_PROBLEM (no truststore yet, a certificate keytool refuses); 0 when every store has every certificate.
import_trusted_ca() {
  local dir stores store tool status=0
  stores=$(java_truststores)
  if [[ -z $stores ]]; then
    TRUST_PROBLEM="no Java truststore under $JVM_DIR (no JDK installed yet)"
    return 1
  fi
  dir=$(mktemp -d "$STATE_DIR/trusted-ca.XXXXXX")
  if ! split_ca_bundle "$dir"; then
    rm -rf "$dir"
    TRUST_PROBLEM="a certificate of $TRUSTED_CA_SOURCE is not valid PEM (base64)"
    return 1
  fi
  while IFS=$'\t' read -r store tool; do
    if ! import_into_truststore "$store" "$tool" "$dir"; then
      TRUST_PROBLEM="keytool could not import $TRUSTED_CA_SOURCE into $store: $LAST_KEYTOOL_ERROR"
      status=1
      break
    fi
  done <<<"$stores"
  rm -rf "$dir"
  return "$status"
}

# EMR has configured Spark: its packages, Java among them, are installed by then.
spark_configured() {
  [[ -f $SPARK_DEFAULTS ]] && grep -Eq "^[[:space:]]*${TRANSPORT_URL_PROPERTY//./\\.}[[:space:]=]" "$SPARK_DEFAULTS"
}

# The bootstrap's part: fetch and verify the CA, import it into the truststores there are. TRUST_PENDING says
# whether the watcher must import again once EMR has configured Spark.
trust_ca() {
  TRUST_PENDING=false
  [[ -n $TRUSTED_CA_SOURCE ]] || return 0
  fetch_trusted_ca
  if import_trusted_ca; then
    log "every Java truststore under $JVM_DIR trusts $TRUSTED_CA_SOURCE"
  elif [[ -n $(java_truststores) ]]; then
    fail "$TRUST_PROBLEM; the listener could not verify the load balancer"
  else
    log "$TRUST_PROBLEM: the watcher imports $TRUSTED_CA_SOURCE once EMR has configured Spark"
  fi
  spark_configured || TRUST_PENDING=true
}

# --trusted-ca-only: on a running node the JDKs are installed, so the CA goes into every truststore now or never.
trust_now() {
  log "node root ${NODE_ROOT}: importing $TRUSTED_CA_SOURCE only (--trusted-ca-only)"
  fetch_trusted_ca
  import_trusted_ca || fail "$TRUST_PROBLEM"
  log "every Java truststore under $JVM_DIR trusts $TRUSTED_CA_SOURCE"
}

# Put a verified copy of the jar into $1 (a classpath directory); atomic, so Spark never
# sees half a jar. Prints nothing, returns 0 when the directory already had it.
place_jar() {
  local dir=$1 target=$1/$JAR_NAME
  if has_jar "$target" "$SHA256"; then
    return 0
  fi
  cp "$INSTALLED_JAR" "$dir/.$JAR_NAME.tmp"
  chmod 0644 "$dir/.$JAR_NAME.tmp"
  mv -f "$dir/.$JAR_NAME.tmp" "$target"
  log "installed $target"
  CHANGED=true
}

# Rename every other OpenLineage listener jar so the JVM's dir/* classpath wildcard
# (which only matches *.jar) skips it: one listener jar per classpath.
disable_other_listener_jars() {
  local jar
  for jar in "$EMR_LISTENER_DIR"/*.jar "$SPARK_JARS_DIR"/openlineage-spark*.jar; do
    [[ $jar == "$SPARK_JARS_DIR/$JAR_NAME" ]] && continue
    mv -f "$jar" "$jar$DISABLED_SUFFIX"
    log "disabled $jar (listener-source=bundle: this bundle's listener wins)"
    CHANGED=true
  done
}

emr_jar_handled() {  # EMR's jar has been seen and disabled
  local disabled=("$EMR_LISTENER_DIR"/*.jar"$DISABLED_SUFFIX")
  [[ ${#disabled[@]} -gt 0 ]]
}

# Fail-open: without the jar, spark.extraListeners would stop every Spark application with
# ClassNotFoundException, so take our listener out of spark-defaults.conf once EMR writes it.
remove_listener_from_spark_defaults() {
  [[ -f $SPARK_DEFAULTS ]] || return 1
  grep -Eq "^[[:space:]]*spark\.extraListeners[[:space:]=].*${LISTENER_CLASS//./\\.}" "$SPARK_DEFAULTS" || return 1
  local tmp=$SPARK_DEFAULTS.emr-lineage.tmp
  awk -v cls="$LISTENER_CLASS" '
    $1 == "spark.extraListeners" {
      n = split($2, parts, ","); kept = ""
      for (i = 1; i <= n; i++) if (parts[i] != cls && parts[i] != "") kept = kept (kept == "" ? "" : ",") parts[i]
      if (kept != "") print $1 " " kept
      next
    }
    { print }' "$SPARK_DEFAULTS" >"$tmp"
  replace_file "$tmp" "$SPARK_DEFAULTS"
  log "removed $LISTENER_CLASS from spark.extraListeners in $SPARK_DEFAULTS (no listener jar on this node)"
}

# Replace $2 by $1 keeping $2's owner and mode (one rename: readers see the old or the new file).
replace_file() {
  chown --reference="$2" "$1" 2>/dev/null || true
  chmod --reference="$2" "$1"
  mv -f "$1" "$2"
}

# Give the listener the gateway's API key: once EMR has written spark-defaults.conf with the
# listener's transport, (re)write the two api_key auth entries. Returns 0 when they are in place.
add_api_key_to_spark_defaults() {
  spark_configured || return 1
  if grep -Fxq "$AUTH_TYPE_PROPERTY api_key" "$SPARK_DEFAULTS" \
    && grep -Fxq "$AUTH_KEY_PROPERTY $API_KEY" "$SPARK_DEFAULTS"; then
    return 0
  fi
  local tmp=$SPARK_DEFAULTS.emr-lineage.tmp
  (
    umask 077  # the key is in the temporary file too
    grep -Ev "^[[:space:]]*spark\.openlineage\.transport\.auth\." "$SPARK_DEFAULTS" >"$tmp" || true
    printf '%s %s\n' "$AUTH_TYPE_PROPERTY" api_key "$AUTH_KEY_PROPERTY" "$API_KEY" >>"$tmp"
  )
  replace_file "$tmp" "$SPARK_DEFAULTS"
  log "added the gateway API key (api_key auth) to $SPARK_DEFAULTS"
}

# ---- the watcher: finishes what needs Spark to be installed ------------------------------------
# The watcher's part of the CA: once EMR has configured Spark, import it into every truststore there is then,
# once (a refusal is logged: keytool would refuse again). Returns 0 when nothing is left to do.
watch_trust() {
  [[ $TRUST_PENDING == true ]] || return 0
  spark_configured || return 1
  TRUST_PENDING=false
  if import_trusted_ca; then
    TRUST_NOTE=" every Java truststore trusts $TRUSTED_CA_SOURCE"
  else
    log "ERROR: $TRUST_PROBLEM: the listener cannot verify the load balancer's certificate"
  fi
}

watch_node() {  # $1 = install (the jar, then the API key and the CA if any) | configure (the key, the CA) | neutralize
  local mode=$1 deadline=$((SECONDS + WATCH_TIMEOUT)) ships
  ships=$(emr_ships_listener)
  trap - ERR
  set +e
  IN_WATCHER=true
  log "watcher $BASHPID started (mode $mode, timeout ${WATCH_TIMEOUT}s)"
  while (( SECONDS < deadline )); do
    if [[ $mode == neutralize ]]; then
      if remove_listener_from_spark_defaults; then
        log "watcher done"
        rm -f "$WATCHER_PID_FILE"
        return 0
      fi
    else
      local jar_done=true auth_done=true trust_done=true
      if [[ $mode == install ]]; then
        CHANGED=false
        [[ -d $SPARK_JARS_DIR ]] && place_jar "$SPARK_JARS_DIR"
        disable_other_listener_jars
        has_jar "$SPARK_JARS_DIR/$JAR_NAME" "$SHA256" && { [[ $ships == no ]] || emr_jar_handled; } || jar_done=false
      fi
      if [[ -n $API_KEY ]]; then
        add_api_key_to_spark_defaults || auth_done=false
      fi
      watch_trust || trust_done=false
      if [[ $jar_done == true && $auth_done == true && $trust_done == true ]]; then
        log "watcher done:$([[ $mode == install ]] && echo " $JAR_NAME is the only listener jar on Spark's classpath;")$([[ -n $API_KEY ]] && echo " the listener sends the gateway API key;")$TRUST_NOTE"
        rm -f "$WATCHER_PID_FILE"
        return 0
      fi
    fi
    sleep "$POLL_SECONDS"
  done
  if [[ $mode == install ]] && ! has_jar "$SPARK_JARS_DIR/$JAR_NAME" "$SHA256"; then
    log "ERROR: watcher gave up after ${WATCH_TIMEOUT}s: $SPARK_JARS_DIR never appeared (is Spark an application of this cluster?)"
  elif [[ -n $API_KEY ]] && ! add_api_key_to_spark_defaults; then
    log "ERROR: watcher gave up after ${WATCH_TIMEOUT}s: $SPARK_DEFAULTS never got $TRANSPORT_URL_PROPERTY, so the listener has no API key (the gateway answers 401)"
  elif [[ $TRUST_PENDING == true ]]; then
    log "ERROR: watcher gave up after ${WATCH_TIMEOUT}s: $SPARK_DEFAULTS never got $TRANSPORT_URL_PROPERTY, so a JDK installed after the bootstrap may not trust $TRUSTED_CA_SOURCE"
  else
    log "watcher stopped after ${WATCH_TIMEOUT}s (no EMR OpenLineage jar appeared, nothing to disable)"
  fi
  rm -f "$WATCHER_PID_FILE"
}

watcher_running() {
  local pid
  [[ -f $WATCHER_PID_FILE ]] || return 1
  pid=$(<"$WATCHER_PID_FILE")
  [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null
}

start_watcher() {  # $1 = mode; detached from the bootstrap's stdout/stderr so EMR does not wait
  if watcher_running; then
    log "watcher already running (pid $(<"$WATCHER_PID_FILE")), not starting another"
    return 0
  fi
  mkdir -p "$STATE_DIR"
  (watch_node "$1") </dev/null >>"$LOG_FILE" 2>&1 3>&- &
  echo "$!" >"$WATCHER_PID_FILE"
  disown "$!" 2>/dev/null || true
  log "started watcher pid $! to finish once Spark is installed (log: $LOG_FILE)"
}

# ---- main --------------------------------------------------------------------------------------
main() {
  parse_args "$@"
  if (( EUID != 0 )) && [[ -z ${EMR_NODE_ROOT:-} ]]; then
    # EMR runs bootstrap actions as the hadoop user, which has passwordless sudo.
    command -v sudo >/dev/null || fail "must run as root (or with sudo) to write $SPARK_JARS_DIR"
    exec sudo -n -E "$BASH" "$0" "$@"
  fi
  mkdir -p "$LOG_DIR" "$STATE_DIR" 2>/dev/null || fail "cannot create $LOG_DIR and $STATE_DIR"
  # From here on, tools' own error output goes to the log; stderr (fd 3) gets only our one line.
  exec 2>>"$LOG_FILE"
  trap 'on_unexpected_error $? $LINENO "$BASH_COMMAND"' ERR

  [[ -n $EMR_RELEASE ]] || EMR_RELEASE=$(instance_data_field releaseLabel)
  [[ -n $REGION ]] || REGION=${AWS_REGION:-${AWS_DEFAULT_REGION:-$(instance_data_field region)}}
  if [[ $TRUST_ONLY == true ]]; then
    trust_now
    return 0
  fi
  local ships
  ships=$(emr_ships_listener)
  log "node root ${NODE_ROOT}, release ${EMR_RELEASE:-unknown}, region ${REGION:-unknown}, listener-source $LISTENER_SOURCE, fail-$([[ $FAIL_OPEN == true ]] && echo open || echo closed)"
  CHANGED=false

  if [[ $LISTENER_SOURCE == emr ]]; then
    case $ships in
      no) fail "--listener-source emr but $EMR_RELEASE ships no OpenLineage jar (EMR 7.11+ does); use listener-source bundle" ;;
      unknown) fail "--listener-source emr but the EMR release is unknown (no --emr-release, no releaseLabel in $INSTANCE_DATA)" ;;
    esac
    [[ -z $API_KEY_SECRET ]] || read_api_key
    trust_ca
    if [[ -e $SPARK_JARS_DIR/$JAR_NAME ]]; then
      rm -f "$SPARK_JARS_DIR/$JAR_NAME"
      log "removed $SPARK_JARS_DIR/$JAR_NAME (listener-source=emr: EMR's listener wins)"
      CHANGED=true
    fi
    log "listener-source emr: using the OpenLineage jar $EMR_RELEASE ships; nothing to install"
    if { [[ -n $API_KEY ]] && ! add_api_key_to_spark_defaults; } || [[ $TRUST_PENDING == true ]]; then
      start_watcher configure
    fi
    return 0
  fi

  [[ $SHA256 != unpinned ]] \
    || fail "the listener's SHA-256 is not pinned (cdk.json emr-lineage.versions.openlineage_spark.sha256 is null): run 'emr-lineage listener stage --pin', pin it and redeploy"
  [[ -z $API_KEY_SECRET ]] || read_api_key
  trust_ca
  mkdir -p "$INSTALL_DIR"
  INSTALLED_JAR=$INSTALL_DIR/$JAR_NAME
  if has_jar "$INSTALLED_JAR" "$SHA256"; then
    log "$INSTALLED_JAR already present with the pinned SHA-256, not downloading"
  else
    local download=$INSTALL_DIR/.$JAR_NAME.download
    rm -f "$download"
    if ! fetch_jar "$download"; then
      rm -f "$download"
      fail "could not download $JAR_URI after $ATTEMPTS attempts: ${LAST_AWS_ERROR:-no error text}"
    fi
    local actual
    actual=$(sha256_of "$download")
    if [[ $actual != "$SHA256" ]]; then
      rm -f "$download"
      fail "SHA-256 mismatch for $JAR_URI: got $actual, expected $SHA256; nothing installed"
    fi
    chmod 0644 "$download"
    mv -f "$download" "$INSTALLED_JAR"
    log "downloaded and verified $JAR_URI (sha256 $SHA256) to $INSTALLED_JAR"
    CHANGED=true
  fi

  if [[ -d $SPARK_JARS_DIR ]]; then
    place_jar "$SPARK_JARS_DIR"
  fi
  disable_other_listener_jars
  if ! has_jar "$SPARK_JARS_DIR/$JAR_NAME" "$SHA256"; then
    start_watcher install
  elif [[ $ships != no ]] && ! emr_jar_handled; then
    start_watcher install
  elif [[ -n $API_KEY ]] && ! add_api_key_to_spark_defaults; then
    start_watcher install
  elif [[ $TRUST_PENDING == true ]]; then
    start_watcher install
  fi
  if [[ $CHANGED == false ]]; then
    log "nothing changed: the listener was already installed"
  fi
}

exec 3>&2  # the bootstrap's real stderr, for the single ERROR/WARNING line
main "$@"
