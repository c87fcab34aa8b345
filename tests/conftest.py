"""Shared fixtures. Expensive ones (CDK synth, Spark session) are session-scoped."""

from __future__ import annotations

import functools
import gc
import itertools
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from emr_lineage.processes import SHORT_LIVED_JVM

REPO_ROOT = Path(__file__).resolve().parent.parent

# Node 20 makes jsii print an end-of-life banner on every CDK call.
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

# Every Spark JVM of the tests (their sessions, the demos they run) lives for seconds: compiling with
# the C1 JIT only and collecting with one GC thread spends far less CPU on two cores than the
# server defaults (emr_lineage.processes.SHORT_LIVED_JVM, which Maven runs get too). spark.driver.defaultJavaOptions is
# prepended to whatever spark.driver.extraJavaOptions a job sets; pyspark passes these arguments
# to spark-submit when it starts the JVM.
os.environ.setdefault(
    "PYSPARK_SUBMIT_ARGS", f"--conf 'spark.driver.defaultJavaOptions={SHORT_LIVED_JVM}' pyspark-shell"
)
# The same for the spark-submit runs of the demo and run-local (their launcher adds SPARK_SUBMIT_OPTS
# to the driver JVM's options).
os.environ.setdefault("SPARK_SUBMIT_OPTS", SHORT_LIVED_JVM)
# moto builds its EC2 backend (which its EMR backend uses) whenever a mock starts or is reset, and by
# default loads some 23,000 public AMIs into it each time: 0.06-0.15 s of CPU per moto EMR test, in setup
# and again in teardown (a third of tests/emr_lineage/cli/test_launch.py's time). No test (and nothing
# emr-lineage calls) looks an AMI up; moto_server inherits this too.
os.environ.setdefault("MOTO_EC2_LOAD_DEFAULT_AMIS", "false")

# app.py, stacks/ and jobs/ are imported by the tests from the checkout itself.
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from emr_lineage.lineage.schemas.store import SCHEMA_DIR_ENV_VAR  # noqa: E402 - after the sys.path entry
from tests import prefetch  # noqa: E402
from tests.paths import REFERENCE_DIR  # noqa: E402


def _share_botocore_service_models() -> None:
    """Every botocore session of the test process shares one loader of the service models.

    moto resets boto3's default session whenever a mock starts, so each test's clients would parse
    the same service JSON again (about half the time of a moto test); the files never change.
    """
    import botocore.loaders
    import botocore.session

    shared: dict[str | None, botocore.loaders.Loader] = {}

    def register_data_loader(session: botocore.session.Session) -> None:
        def loader() -> botocore.loaders.Loader:
            data_path = session.get_config_variable("data_path")
            if data_path not in shared:
                shared[data_path] = botocore.loaders.create_loader(data_path)
            return shared[data_path]

        session._components.lazy_register_component("data_loader", loader)

    botocore.session.Session._register_data_loader = register_data_loader


_share_botocore_service_models()


def _share_botocore_handler_work() -> None:
    """What botocore works out again for each session and client, worked out once per test process.

    A session checks each of its ~600 built-in handlers with inspect (does it take **kwargs?), and a client
    copies its session's event names' aliases with an empty cache, so each event name it emits is aliased
    again: about a third of the CPU of making a session and its clients, which the moto tests do ~1,500
    times. Both answers depend only on the handler, and on the name and botocore's fixed alias table.
    """
    import weakref

    import botocore.hooks

    accepts: weakref.WeakKeyDictionary[object, bool] = weakref.WeakKeyDictionary()  # a handler's dies with it
    accepts_kwargs = botocore.hooks.accepts_kwargs

    def accepts_kwargs_once(func: object) -> bool:
        key = getattr(func, "__func__", func)  # a bound method: its function's signature is the same
        try:
            return accepts[key]
        except KeyError:
            accepts[key] = answer = accepts_kwargs(func)
            return answer
        except TypeError:  # a callable that cannot be referred to weakly
            return accepts_kwargs(func)

    aliased: dict[str, str] = {}
    init = botocore.hooks.EventAliaser.__init__

    def init_sharing_the_aliases(self, event_emitter, event_aliases=None) -> None:
        init(self, event_emitter, event_aliases)
        if self._event_aliases == botocore.hooks.EVENT_ALIASES:
            self._alias_name_cache = aliased

    botocore.hooks.accepts_kwargs = accepts_kwargs_once
    botocore.hooks.EventAliaser.__init__ = init_sharing_the_aliases


_share_botocore_handler_work()

_PREFETCH_KEY = pytest.StashKey[list]()


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[_PREFETCH_KEY] = prefetch.start(session.config)


# Fixtures whose result one background process makes for the whole run (tests/prefetch.py): the Spark
# demos. Tests that need them run last, in this order, so that workers do the rest meanwhile
# instead of waiting for a demo. (Trino, also started there, is ready long before its tests run.)
_LATE_FIXTURES = ("demo_run", "reproduce_run", "schema_change_run")
# Tests that need these run first: Trino, started with the run, stops after its last test, not idle till the end.
_EARLY_FIXTURES = ("trino_endpoints",)


# What a test needs beyond Python, as markers; each marked test is also HEAVY, which `make test-fast`
# leaves out. Most follow from a folder or a fixture; a test that starts one itself (a CLI command running
# spark-submit, say) carries the marker.
NEEDS = {
    "spark": "starts local Spark (a JVM with the listener)",
    "trino": "queries the tests' Trino server",
    "browser": "renders a page in headless Chromium",
    "synth": "synthesizes CDK apps (with cdk-nag, cfn-lint or checkov)",
    "maven": "runs Maven",
    "sandbox": "runs the bootstrap script in a sandboxed node",
    "jvm": "starts a JVM of its own (java, keytool)",
}
HEAVY = "heavy"
_NEEDS_BY_FOLDER = {
    "tests/stacks/": "synth",
    "tests/test_app.py": "synth",
    "tests/bootstrap/": "sandbox",
    "tests/jobs/": "spark",
}
_NEEDS_BY_FIXTURE = {
    "spark": "spark",
    **dict.fromkeys(_LATE_FIXTURES, "spark"),  # the demos
    "listener_lineage": "spark",
    **dict.fromkeys(_EARLY_FIXTURES, "trino"),
    "shown": "browser",  # tests/emr_lineage/lineage/report/test_html_layout.py: the page as Chromium drew it
}


def pytest_configure(config: pytest.Config) -> None:
    for need, what in NEEDS.items():
        config.addinivalue_line("markers", f"{need}: {what}")
    config.addinivalue_line("markers", f"{HEAVY}: needs one of {', '.join(NEEDS)} (make test-fast leaves it out)")
    # pytest-xdist's, declared here too for a run without it (-p no:xdist)
    config.addinivalue_line("markers", "xdist_group(name): the tests of a group run on one xdist worker")


def _mark_needs(item: pytest.Item) -> None:
    needs = {need for name, need in _NEEDS_BY_FIXTURE.items() if name in getattr(item, "fixturenames", ())}
    needs |= {_need_by_folder(item.path)} - {None}
    for need in needs:
        item.add_marker(need)
    # A need marked on the test itself or on its class or module: one walk over all of them
    if not NEEDS.keys().isdisjoint(marker.name for marker in item.iter_markers()):
        item.add_marker(HEAVY)


@functools.cache  # a module's tests share its path
def _need_by_folder(path: Path) -> str | None:
    """The need of every test under ``path`` when its folder (or file) is in _NEEDS_BY_FOLDER."""
    relative = path.relative_to(REPO_ROOT).as_posix() + ("/" if path.is_dir() else "")
    return next((need for folder, need in _NEEDS_BY_FOLDER.items() if relative.startswith(folder)), None)


class _Undecided(Exception):
    """An -m expression whose verdict on a folder depends on more than its markers."""


# An -m line naming more other markers than this is left to pytest (2**n markings to try otherwise).
_MOST_FREE_MARKERS = 8


def _names_read(expression) -> set[str] | None:
    """The marker names ``expression`` reads, found by evaluating it (a name shows only where the ones
    before it let evaluation reach it): None when there are more than _MOST_FREE_MARKERS."""
    names: set[str] = set()

    def reading(chosen: frozenset[str]):
        def matcher(name: str, /, **kwargs: object) -> bool:
            names.add(name)
            return name in chosen

        return matcher

    pending, tried = [frozenset()], set()
    while pending:
        chosen = pending.pop()
        if chosen in tried:
            continue
        tried.add(chosen)
        expression.evaluate(reading(chosen))
        if len(names) > _MOST_FREE_MARKERS:
            return None
        pending.extend(chosen | {name} for name in names - chosen)
    return names


@functools.cache
def _leaves_out(markexpr: str, markers: frozenset[str]) -> bool:
    """Whether ``-m markexpr`` leaves out every test with ``markers``, whatever other markers it carries: the
    expression is false for each way of setting the other names it reads (few: an -m line names a handful)."""
    from _pytest.mark.expression import Expression  # pytest's own parser of -m (pytest is pinned)

    try:
        expression = Expression.compile(markexpr)
    except SyntaxError:
        return False  # pytest reports it when it deselects
    others = _names_read(expression)
    if others is None:
        return False
    others = sorted(others - markers)

    def selects(chosen: set[str]) -> bool:
        def matcher(name: str, /, **kwargs: object) -> bool:
            if kwargs:  # a marker's arguments are unknown before collection: any could match
                raise _Undecided
            return name in markers or name in chosen

        return expression.evaluate(matcher)

    try:
        return not any(selects(set(c)) for n in range(len(others) + 1) for c in itertools.combinations(others, n))
    except _Undecided:
        return False


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """A folder whose tests -m leaves out for its need (make test-fast: tests/stacks and the rest of
    _NEEDS_BY_FOLDER) is not collected at all: its modules would import the CDK, cfn-lint or pyspark
    for tests that never run. None lets pytest's own rules decide."""
    need = _need_by_folder(collection_path) if config.option.markexpr else None
    if need and _leaves_out(config.option.markexpr, frozenset({need, HEAVY})):
        return True
    return None


# tryfirst: before pytest-xdist's own hook reads the xdist_group markers into the node ids.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        names = getattr(item, "fixturenames", ())
        if any(name in names for name in _EARLY_FIXTURES):
            return -1
        return max((i + 1 for i, name in enumerate(_LATE_FIXTURES) if name in names), default=0)

    for item in items:
        _mark_needs(item)
        if "spark" in getattr(item, "fixturenames", ()):  # one worker starts the shared session's JVM, not each
            item.add_marker(pytest.mark.xdist_group("spark-session"))
    items.sort(key=rank)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[object]:
    """After each test, once its fixtures are gone: what is still alive is collected once, then frozen.

    A test process holds a large heap that lives to its end (botocore's service models, moto's backends,
    compiled schemas, imported modules), and CPython's full collection walks all of it whenever the objects
    tests leave behind for a while have grown by a quarter of it: in the moto tests, 29 full collections,
    a quarter of their CPU. Frozen objects (gc.freeze) are no longer walked, so a collection walks only
    what the tests since made; what a test drops is freed as before.
    """
    try:
        return (yield)
    finally:
        gc.collect()
        gc.freeze()


@pytest.hookimpl(tryfirst=True)  # before pytest removes the run's temporary directory, which they write to
def pytest_sessionfinish(session: pytest.Session) -> None:
    prefetch.stop(session.config.stash.get(_PREFETCH_KEY, []))


# The OpenLineage schemas the event checks use: the reference copy, never the user cache.
REFERENCE_SCHEMA_DIR = REFERENCE_DIR / "openlineage" / "spec"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def reference_dir() -> Path:
    """$EMR_LINEAGE_REFERENCE (default ../shared/reference): OpenLineage schemas/fixtures and
    Marquez responses (read-only third-party data, never committed here)."""
    if not REFERENCE_DIR.is_dir():
        pytest.fail(
            f"reference data not found at {REFERENCE_DIR}: run make setup (or make reference), or set "
            "EMR_LINEAGE_REFERENCE"
        )
    return REFERENCE_DIR


@pytest.fixture(scope="session", autouse=True)
def schema_dir_is_the_reference_spec() -> Iterator[Path]:
    """Every test (and every process it starts) checks events against the reference schemas,
    whatever the user cache or the caller's EMR_LINEAGE_SCHEMA_DIR holds."""
    previous = os.environ.get(SCHEMA_DIR_ENV_VAR)
    os.environ[SCHEMA_DIR_ENV_VAR] = str(REFERENCE_SCHEMA_DIR)
    yield REFERENCE_SCHEMA_DIR
    if previous is None:
        os.environ.pop(SCHEMA_DIR_ENV_VAR, None)
    else:
        os.environ[SCHEMA_DIR_ENV_VAR] = previous


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    """One local SparkSession for the whole test run (jobs and capture tests share it).

    In-memory catalog with its warehouse in a tmp dir; UI and progress bars off; the listener's class
    archive when there is one (:func:`_listener_class_archive`).
    """
    from pyspark.sql import SparkSession

    from emr_lineage.spark import class_archive
    from emr_lineage.spark.conf import DRIVER_CLASSPATH

    base = tmp_path_factory.mktemp("spark")
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("emr-lineage-tests")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.warehouse.dir", str(base / "warehouse"))
    )
    java_options = f"-Dderby.system.home={base}"
    archived = _listener_class_archive()
    if archived:
        jar, archive = archived
        builder = builder.config(DRIVER_CLASSPATH, jar)
        java_options += f" {class_archive.using(archive)}"
    session = builder.config("spark.driver.extraJavaOptions", java_options).getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def _listener_class_archive() -> tuple[str, Path] | None:
    """The listener jar (with the Iceberg runtime beside it: the classpath of local runs) and local Spark's class
    archive for that classpath (make setup makes both), when both are there. With them the session's JVM maps
    most of its classes from the archive instead of reading them from the jars (tests/jobs: 14-16 -> 11.6 s of
    the JVM's CPU); the jars on the classpath change nothing else: without spark.extraListeners the listener is
    never used (on EMR it is on every driver's classpath too), nor Iceberg without a catalog of its."""
    from emr_lineage.listener.jar import ListenerError
    from emr_lineage.listener.maven import local_jars
    from emr_lineage.spark import class_archive
    from emr_lineage.spark.conf import DRIVER_CLASSPATH
    from emr_lineage.spark.local import java_command, spark_home
    from tests.versions import DEV

    try:
        jars = local_jars(DEV.versions)
    except ListenerError:
        return None
    jar = os.pathsep.join([str(jars.listener), str(jars.iceberg_runtime)])
    archive = class_archive.archive_path(java_command(), spark_home(), {DRIVER_CLASSPATH: jar})
    return (jar, archive) if archive.is_file() else None
