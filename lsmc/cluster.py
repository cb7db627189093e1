"""Long job families as tasks on Dask distributed (docs/cluster.md): the scaling sweep's points, LevelDB's
test binaries, the NAND report's timing modes. The tools that take `--cluster` call this module; nothing
else imports it, and the serial paths stay as they are: a task calls the same per-point function the
serial loop calls, and the tool writes the same CSV/Markdown/PNG files from the results, in the serial
order.

    with cluster.connect(None) as client:          # a LocalCluster: one worker per core
        done = cluster.run(client, fn, points)     # [Outcome(point, value, error)], in `points` order

- `connect(address)`: None and no LSMC_CLUSTER: a LocalCluster of one single-threaded worker process per
  core, the machine's memory shared out evenly (stated on the terminal with the dashboard's address);
  `tcp://HOST:8786` (or LSMC_CLUSTER): a running scheduler, whose workers have the project installed at
  the same sources (scripts/setup). A scheduler that does not answer within CONNECT_TIMEOUT seconds is
  a ClusterError (the tools print one line, exit 2) before any work.
- No shared file system: a task carries its parameters (the workload is made from them on the worker),
  builds what it needs on its worker (build steps are cached by stamps and locked per machine, so the
  first task of a machine builds and the others reuse it) and returns its result. Data every task of a run
  needs (`run(..., shared=X)`: a seed sweep's netlist of megabytes) is scattered to the workers once and
  each task refers to it, so the task graph the client sends stays small (Dask warns of a graph over
  10 MB, and would ship the data again with every task).
- A task that raises is run once more (Dask's `retries=1`); a task whose worker dies is failed by the
  scheduler at once (allowed-failures 0) and sent once more by run(); then either is reported as failed
  with its error: never dropped.
- Tasks whose wall time is the measurement ask for the worker resource `machine` (timed=True): the
  LocalCluster gives it to one worker, a remote cluster to one worker per machine (docs/cluster.md).
- Ctrl-C cancels the outstanding tasks and returns the finished ones (`Interrupted.outcomes`).
"""
from __future__ import annotations

import contextlib
import functools
import os
import sys
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from lsmc.cliutil import CliError
from lsmc.paths import ROOT

# dask and distributed are imported where used: a tool imports this module for its --cluster option, and
# a serial run should not pay for them.

CONNECT_TIMEOUT = 5  # seconds a scheduler has to answer
ENV = "LSMC_CLUSTER"
MACHINE = "machine"  # the worker resource of tasks that must have the machine to themselves
# Source trees a task's result depends on: a worker whose copy differs would compute other figures.
SOURCES = ("build.sc", "hw", "nand", "sim", "fw", "host", "leveldb", "lsmc", "boards")


class ClusterError(CliError, RuntimeError):
    """The cluster cannot be used (no scheduler at the address, other sources on a worker): the tools' one
    line and exit 2 (a CliError; a RuntimeError for `demo`)."""


class Interrupted(Exception):
    """Ctrl-C during run(): the outstanding tasks were cancelled; `outcomes` holds the finished ones."""

    def __init__(self, outcomes: list):
        super().__init__(f"interrupted: {len(outcomes)} task(s) had finished")
        self.outcomes = outcomes


@dataclass
class Outcome:
    """One task's end: its point, its value, or the error it failed with after its retry."""
    point: Any
    value: Any = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


@functools.cache
def source_digest() -> str:
    """Hash of the sources a result depends on, on this machine (a worker checks the client's against its own)."""
    import hashlib

    h = hashlib.sha256()
    for top in SOURCES:
        p = ROOT / top
        files = [p] if p.is_file() else sorted(f for f in p.rglob("*") if f.is_file()) if p.is_dir() else []
        for f in files:
            if "__pycache__" in f.parts or f.suffix == ".pyc":  # made by the Python that runs it
                continue
            h.update(str(f.relative_to(ROOT)).encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:24]


def _call(point, *shared, fn: Callable, digest: str):
    """What a worker runs: `fn(point)` (`fn(point, shared)` for a run with shared data), once it knows its
    sources are the client's."""
    mine = source_digest()
    if mine != digest:
        raise ClusterError(f"this worker's sources ({ROOT}, digest {mine}) are not the client's ({digest}): "
                           "install the same commit on every worker (scripts/setup)")
    return fn(point, *shared)


def _memory_per_worker(workers: int) -> int:
    import psutil

    return psutil.virtual_memory().total // workers


@contextlib.contextmanager
def connect(address: str | None = None, workers: int | None = None, log=print):
    """A Client on `address` (or LSMC_CLUSTER), or on a new LocalCluster of `workers` (default: one per
    core) single-threaded worker processes; closed (and the LocalCluster stopped) on exit."""
    import dask
    import distributed

    address = address or os.environ.get(ENV) or None
    # A worker's death fails its task at once; run() sends it once more (the scheduler reads this when it
    # starts: a remote scheduler needs it in its own config, docs/cluster.md).
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        if address:
            try:
                client = distributed.Client(address, timeout=CONNECT_TIMEOUT)
            except (OSError, TimeoutError, ValueError) as e:
                why = str(e).splitlines()[0] if str(e) else type(e).__name__
                raise ClusterError(f"no Dask scheduler answers at {address} within {CONNECT_TIMEOUT} s ({why})") \
                    from None
            n = len(client.scheduler_info().get("workers", {}))
            log(f"cluster: scheduler {address}, {n} worker(s), dashboard {client.dashboard_link}")
            try:
                yield client
            finally:
                client.close()
            return
        workers = workers or os.cpu_count() or 1
        mem = _memory_per_worker(workers)
        import logging

        cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                           memory_limit=mem, silence_logs=logging.CRITICAL,
                                           dashboard_address=":8787")
        try:
            client = distributed.Client(cluster)
            client.register_plugin(_machine_resource())
            log(f"cluster: local, {workers} worker(s) x 1 thread, {mem / 2**30:.1f} GiB memory each, "
                f"dashboard {client.dashboard_link}")
            try:
                yield client
            finally:
                client.close()
        finally:
            cluster.close()


def _machine_resource():
    """A worker plugin: the LocalCluster's worker 0 holds the `machine` resource, so timed tasks run one
    at a time on this machine; by name, so that the worker its nanny restarts after a death holds it again."""
    import distributed

    class MachineResource(distributed.WorkerPlugin):
        name = "lsmc-machine-resource"

        async def setup(self, worker):
            if worker.name == 0:
                await worker.set_resources(**{MACHINE: 1})

    return MachineResource()


def _free_slots(client, timed: bool) -> int:
    """Threads (timed: `machine` resources) the scheduler's live workers have, less the tasks they hold."""
    held = client.processing()
    free = 0
    for address, w in client.scheduler_info(n_workers=-1)["workers"].items():
        cap = int(w.get("resources", {}).get(MACHINE, 0) if timed else w.get("nthreads", 1))
        free += max(0, cap - len(held.get(address, ())))
    return free


_NOTHING = object()


def run(client, fn: Callable, points: Iterable, *, timed: bool = False, label: str = "tasks",
        on_result: Callable | None = None, progress: bool = True, shared: Any = _NOTHING) -> list[Outcome]:
    """fn(point) for every point as a task; returns an Outcome per point in `points` order. `fn` must be a
    module-level function (workers import it); `timed`: the task's wall time is its result (one per machine).
    `shared`: data every task needs, scattered to every worker once (a future in each task, not a copy in the
    graph); the tasks then run fn(point, shared). `on_result(outcome)` is called as each task ends (the tools
    print their line there). Progress: a tqdm bar on stderr (tasks done / total, running, failed, time left)
    and Dask's dashboard."""
    import distributed
    from tqdm import tqdm

    points = list(points)
    def has_machine() -> bool:
        return any(MACHINE in w.get("resources", {}) for w in client.scheduler_info(n_workers=-1)["workers"].values())

    deadline = time.monotonic() + 30  # a worker that died may be coming back (its nanny restarts it)
    while timed and not has_machine() and time.monotonic() < deadline:
        time.sleep(0.5)
    if timed and not has_machine():
        raise ClusterError(f"no worker offers the resource `{MACHINE}` that timed tasks need (start one worker "
                           f"per machine with --resources {MACHINE}=1, docs/cluster.md)")
    digest = source_digest()
    run_id = uuid.uuid4().hex[:8]
    call = functools.partial(_call, fn=fn, digest=digest)  # pickled once per map
    held = None  # the scattered `shared` data: every worker holds a copy

    def shared_args() -> list:
        nonlocal held
        if shared is _NOTHING:
            return []
        if held is None or held.status != "finished":  # first use, or every copy went with its worker
            (held,) = client.scatter([shared], broadcast=True, hash=False)
        return [[held]]

    # A task that raises is retried by Dask (retries=1). A task whose worker dies is retried here: the
    # scheduler fails it at once (allowed-failures 0) and this loop sends it once more. Dask's own death
    # count would also blame the tasks that merely waited on the dead worker, so no task is sent while no
    # live worker has a free thread: a worker then never holds more than the one task it runs, and a
    # death blames the task that caused it, never an innocent neighbour.
    waiting = list(range(len(points)))  # point indices not yet sent (retries go first)
    deaths = [0] * len(points)
    running: dict = {}  # future -> point index
    outcomes: list[Outcome | None] = [None] * len(points)
    failed = 0
    bar = tqdm(total=len(points), desc=label, unit="task", file=sys.stderr, disable=not progress or None,
               dynamic_ncols=True)
    last = 0.0
    try:
        while waiting or running:
            free = _free_slots(client, timed) if waiting else 0
            while waiting and free > 0:
                i = waiting.pop(0)
                (f,) = client.map(call, [points[i]], *shared_args(), key=[f"{label}-{i}-{deaths[i]}-{run_id}"],
                                  pure=False, retries=1, resources={MACHINE: 1} if timed else None)
                running[f] = i
                free -= 1
            if not running:  # every worker is away (their nannies restart them): look again shortly
                time.sleep(0.5)
                continue
            try:  # while points wait, look again every half second: a restarted worker frees a thread too
                done, _ = distributed.wait(list(running), timeout=0.5 if waiting else None,
                                           return_when="FIRST_COMPLETED")
            except TimeoutError:
                continue
            for fut in done:
                i = running.pop(fut)
                status = fut.status
                value = fut.result() if status == "finished" else None
                exc = fut.exception() if status == "error" else None
                fut.release()  # a result held on a worker would be recomputed if that worker died later
                if status == "finished":
                    out = Outcome(points[i], value)
                elif isinstance(exc, distributed.KilledWorker) and deaths[i] == 0:
                    deaths[i] = 1
                    waiting.insert(0, i)  # once more, on whichever worker is free next
                    continue
                else:
                    out = Outcome(points[i], error=f"{type(exc).__name__}: {exc}" if exc else status)
                    failed += 1
                outcomes[i] = out
                bar.update(1)
                if time.monotonic() - last > 1:  # the scheduler's view of what runs, at most once a second
                    last = time.monotonic()
                    bar.set_postfix(running=sum(len(v) for v in client.processing().values()), failed=failed,
                                    refresh=False)
                if on_result:
                    on_result(out)
    except KeyboardInterrupt:
        client.cancel(list(running))
        bar.close()
        raise Interrupted([o for o in outcomes if o is not None]) from None
    finally:
        if held is not None:
            held.release()
    bar.set_postfix(running=0, failed=failed)
    bar.close()
    return outcomes  # type: ignore[return-value]


def add_option(ap, what: str = "the points") -> None:
    """The `--cluster [ADDRESS]` option of a tool (None: the serial run; '': LSMC_CLUSTER or a LocalCluster)."""
    ap.add_argument("--cluster", nargs="?", const="", default=None, metavar="ADDRESS",
                    help=f"{what} as Dask tasks, on a local cluster of one worker per core or on the scheduler at "
                         f"ADDRESS (tcp://HOST:8786; default ${ENV} when set); docs/cluster.md")


def failures_text(outcomes: list[Outcome], describe: Callable = str) -> str:
    """The Markdown lines naming every failed task and its error (empty when none failed)."""
    bad = [o for o in outcomes if not o.ok]
    if not bad:
        return ""
    return "\n".join([f"**{len(bad)} task(s) failed** (after one retry):", ""] +
                     [f"- {describe(o.point)}: {o.error}" for o in bad]) + "\n"
