"""Long job families as Dask tasks (lsmc.cluster, docs/cluster.md) on a 2-worker LocalCluster: each family
on a small case gives what the serial path gives (the files byte for byte where the serial run writes
files); a task that raises and a worker that dies are retried once, then reported; a scheduler that does
not answer is one line and exit 2 before any work; Ctrl-C keeps the finished results."""
import os
import socket
import sys
import time
from pathlib import Path

import cloudpickle
import pytest

from lsmc import cluster

# The test's own task functions travel by value: the workers do not have tests/ on their path.
cloudpickle.register_pickle_by_value(sys.modules[__name__])


@pytest.fixture(scope="module")
def client():
    with cluster.connect(None, workers=2, log=lambda s: None) as c:
        yield c


def _attempt(folder: str) -> int:
    """Count this call in `folder` (the workers share this machine's file system); returns its number."""
    n = len(list(Path(folder).glob("attempt-*"))) + 1
    (Path(folder) / f"attempt-{n}-{os.getpid()}").touch()
    return n


def _raises(point):
    folder, x = point
    if x == 2:
        _attempt(folder)
        raise ValueError(f"bad point {x}")
    return x * 10


def _dies(point):
    folder, x = point
    if x == 1:
        _attempt(folder)
        os._exit(3)  # the worker process ends mid-task
    time.sleep(0.5)  # the others still run while the culprit's retry waits for a free worker
    return x


def _dies_once(point):
    folder, x = point
    if _attempt(folder) == 1:
        os._exit(3)
    return x + 100


def _slow(point):
    time.sleep(0.2 * point)
    return point


def _length(point):
    data, x = point
    return len(data) + x


def _length_shared(x, data):
    return len(data) + x


def test_a_raising_task_is_retried_once_then_reported(client, tmp_path):
    got = cluster.run(client, _raises, [(str(tmp_path), x) for x in range(4)], progress=False)
    assert [o.value for o in got] == [0, 10, None, 30]
    assert [o.ok for o in got] == [True, True, False, True]
    assert got[2].error == "ValueError: bad point 2"
    assert len(list(tmp_path.glob("attempt-*"))) == 2  # the first run and one retry
    assert "bad point 2" in cluster.failures_text(got)


def test_a_dead_worker_is_retried_once_then_reported(client, tmp_path):
    """Only the task that killed its worker fails: the tasks that ran beside it, before and after its
    retry, are not blamed for the deaths."""
    got = cluster.run(client, _dies, [(str(tmp_path), x) for x in range(5)], progress=False)
    assert [o.ok for o in got] == [True, False, True, True, True]
    assert [o.value for o in got] == [0, None, 2, 3, 4]
    assert got[1].error.startswith("KilledWorker"), got[1].error
    assert len(list(tmp_path.glob("attempt-*"))) == 2


def test_a_worker_death_then_success(client, tmp_path):
    got = cluster.run(client, _dies_once, [(str(tmp_path), 5)], progress=False)
    assert got[0].ok and got[0].value == 105


def test_ctrl_c_keeps_the_finished_results(client):
    """A KeyboardInterrupt in the progress loop (as Ctrl-C raises it there): the outstanding tasks are
    cancelled, the finished ones come back."""
    seen = []

    def on_result(o):
        seen.append(o)
        if len(seen) == 2:
            raise KeyboardInterrupt

    with pytest.raises(cluster.Interrupted) as e:
        cluster.run(client, _slow, range(12), on_result=on_result, progress=False)
    done = e.value.outcomes
    assert len(done) == 2 and all(o.ok and o.value == o.point for o in done)


def _span(x):
    t0 = time.time()
    time.sleep(1)
    return t0, time.time(), os.getpid()


def test_timed_tasks_run_one_at_a_time(client):
    """Tasks whose wall time is their result hold the `machine` resource: two workers, never two at once."""
    spans = sorted(o.value for o in cluster.run(client, _span, range(4), timed=True, progress=False))
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])), spans
    untimed = sorted(o.value for o in cluster.run(client, _span, range(4), progress=False))
    assert any(a[1] > b[0] for a, b in zip(untimed, untimed[1:])), untimed  # the control: they do overlap


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the test connects


def test_a_scheduler_that_does_not_answer(capsys):
    """One line naming the address, exit 2, in about CONNECT_TIMEOUT seconds and before any simulation."""
    from lsmc.report import demo

    addr = f"tcp://127.0.0.1:{_closed_port()}"
    t0 = time.monotonic()
    assert demo.main(["scaling", "--sizes", "64", "--cluster", addr]) == 2
    assert time.monotonic() - t0 < cluster.CONNECT_TIMEOUT + 20
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and addr in err and "no Dask scheduler answers" in err, err
    assert "scaling: " not in out  # no point ran


def test_the_environment_names_the_scheduler(monkeypatch, capsys):
    from lsmc.report import nand

    addr = f"tcp://127.0.0.1:{_closed_port()}"
    monkeypatch.setenv(cluster.ENV, addr)
    assert nand.main(["--modes", "sdr5", "--soc-pages", "0", "--seq-pages", "0", "--cluster"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and addr in err, err


# ---- the families: the same results as the serial path ----------------------------------------------------

@pytest.mark.slow
def test_scaling_points_as_tasks_write_the_serial_files(client, tmp_path):
    """Two sweep points (1 and 2 units of 4 ways, 1,024 entries, the 2-unit SoC of tests/test_soc_units.py):
    scaling.csv, .md and .png byte for byte as the serial sweep writes them."""
    from lsmc.report import scaling as report

    serial = report.sweep(cus_list=(1, 2), ways_list=(4,), sizes=(1024,), units=2, workdir=tmp_path / "serial",
                           log=lambda s: None)
    got = cluster.run(client, report.scaling_point, [(4, 1024, c, "kcu105", 2) for c in (1, 2)], progress=False)
    assert all(o.ok for o in got), [o.error for o in got]
    rows = [o.value for o in got]
    speed = lambda rs: [{k: v for k, v in r.items() if k != "mcycles_per_s"} for r in rs]  # noqa: E731
    assert speed(rows) == speed(serial) and all(r["pass"] == "PASS" for r in rows)
    for name, rs in (("serial", serial), ("cluster", rows)):
        report.write_results(rs, tmp_path / name / "out", conditions="Same conditions.")
    for f in ("scaling.csv", "scaling.md", "scaling.png"):
        assert (tmp_path / "cluster" / "out" / f).read_bytes() == (tmp_path / "serial" / "out" / f).read_bytes(), f


def test_table_report_cases_as_tasks_give_the_serial_rows(client, tmp_path):
    """The table-engine report's cases as tasks (a case a task: its job, the reference and the back ends): the
    rows the serial run gives, in its order, but for LevelDB's own compaction speed (measured CPU time); the
    files differ in that column only."""
    from lsmc.report import tables as report

    cases, kw = [("dbbench", "none"), ("key64", "none")], dict(entries=200, backends=("rtl", "model"), units=(1, 2))
    serial, _ = report.run(tmp_path / "serial", cases=cases, log=lambda s: None, load="1", **kw)
    logged: list[str] = []
    rows, paths, outcomes = report.run_cluster(client, tmp_path / "cluster", cases=cases, log=logged.append,
                                               load="1", **kw)
    assert all(o.ok for o in outcomes), [o.error for o in outcomes]
    measured = lambda rs: [{k: v for k, v in r.items() if k != "leveldb_cpu_mb_per_s"} for r in rs]  # noqa: E731
    assert measured(rows) == measured(serial) and all(r["pass"] == "PASS" for r in rows)
    assert any("rtl x1" in line for line in logged) and any("key64" in line for line in logged)
    csv = [[ln.rsplit(",", 1)[0] for ln in (tmp_path / d / "tables.csv").read_text().splitlines()]
           for d in ("serial", "cluster")]
    assert csv[0] == csv[1]


@pytest.mark.slow
def test_nand_modes_as_tasks_write_the_serial_files(client, tmp_path, capsys):
    """sdr4, sdr5 and nvddr5 with the ECC sweep: each mode on a simulation of its own gives the rows the
    serial run measures on one simulation in turn (nand.csv, nand_ecc.csv, nand.png byte for byte;
    nand.md but for its wall-time line)."""
    from lsmc.report import nand

    args = ["--modes", "sdr4,sdr5,nvddr5", "--pages", "1", "--ecc-pages", "1", "--seq-pages", "0",
            "--soc-pages", "0"]
    assert nand.main([*args, "--out-dir", str(tmp_path / "serial")]) == 0
    addr = client.scheduler.address
    assert nand.main([*args, "--out-dir", str(tmp_path / "cluster"), "--cluster", addr]) == 0
    for f in ("nand.csv", "nand_ecc.csv", "nand.png"):
        assert (tmp_path / "cluster" / f).read_bytes() == (tmp_path / "serial" / f).read_bytes(), f
    md = [[ln for ln in (tmp_path / d / "nand.md").read_text().splitlines() if not ln.startswith("Simulated in")]
          for d in ("serial", "cluster")]
    assert md[0] == md[1]


@pytest.mark.slow
@pytest.mark.long  # a LevelDB build when tests/test_leveldb.py has not made one: LSMC_LONG=1
def test_leveldb_binary_as_a_task(client):
    """One LevelDB test binary (a filtered db_test) as a task: the serial run's verdict, compactions
    offloaded in both (their number depends on when LevelDB's background thread runs: 10 and 11 seen)."""
    import subprocess

    from lsmc import leveldb
    from lsmc.paths import ROOT

    res = subprocess.run([str(ROOT / "scripts/leveldb"), "build", "db_test"], capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr  # as tests/test_leveldb.py (the worker then reuses it)
    flt = "DBTest.SparseMerge:DBTest.Empty"
    serial = leveldb.judge_binary("db_test", True, flt)
    got = cluster.run(client, leveldb.leveldb_task, [("binary", "db_test", True, flt)], progress=False)
    assert got[0].ok, got[0].error
    (s_stock, s), (c_stock, c) = serial, got[0].value
    assert s_stock is None and c_stock is None
    assert (c.passed, c.failed, c.failures, c.rc) == (s.passed, s.failed, s.failures, s.rc) == (2, 0, [], 0)
    assert c.log.offloaded > 0 and s.log.offloaded > 0


def test_demo_writes_finished_points_and_names_failed_ones(monkeypatch, tmp_path, capsys):
    """`demo scaling --cluster`'s handling of the outcomes (no cluster: the sweep's outcomes faked): a failed
    point is named with its error in scaling.md (exit 1); after Ctrl-C the finished points are written
    with a line saying how many finished (exit 130)."""
    import contextlib

    from lsmc.report import demo
    from lsmc.report import scaling as report

    row = report.make_row(1, 4, 64, 1000, 1024, 1024, 16, True)
    row.update(total_cycles=1200, mcycles_per_s=1.0)
    pts = [(w, n, c, "kcu105", 4) for w, n, c in report.sweep_points(sizes=(64,))]
    monkeypatch.setattr(demo, "RESULTS", tmp_path)
    monkeypatch.setattr(report, "leveldb_for_sizes", lambda sizes: None)
    monkeypatch.setattr(cluster, "connect", lambda address: contextlib.nullcontext())
    monkeypatch.setattr(report, "scaling_sweep", lambda client, sizes, ddr, log: [
        cluster.Outcome(pts[0], row), cluster.Outcome(pts[1], error="ValueError: no result")])
    assert demo.main(["scaling", "--sizes", "64", "--cluster"]) == 1
    md = (tmp_path / "scaling.md").read_text()
    assert "1 task(s) failed" in md and "2 unit(s) x 4 ways, 64 entries: ValueError: no result" in md
    assert (tmp_path / "scaling.csv").read_text() == report.csv_text([row])

    def interrupted(client, sizes, ddr, log):
        raise cluster.Interrupted([cluster.Outcome(pts[0], row)])

    monkeypatch.setattr(report, "scaling_sweep", interrupted)
    assert demo.main(["scaling", "--sizes", "64", "--cluster"]) == 130
    assert f"Interrupted: 1 of {len(pts)} points finished." in (tmp_path / "scaling.md").read_text()
    assert "interrupted" in capsys.readouterr().out


def test_demo_tables_names_a_failed_case(monkeypatch, tmp_path, capsys):
    """`demo tables --cluster` (no cluster: the cases' outcomes faked): the finished case's rows are written, the
    failed case is named with its error in tables.md, exit 1; Ctrl-C writes the finished ones, exit 130."""
    import contextlib

    from lsmc.report import demo
    from lsmc.report import tables as report

    row = report.make_row(1, 4, "none", 1000, 500, 100, 100, True, "dbbench", "rtl", 10.0)
    monkeypatch.setattr(demo, "RESULTS", tmp_path)
    monkeypatch.setattr(cluster, "connect", lambda address: contextlib.nullcontext())

    def outcomes(client, fn, points, **kw):
        for line in ("tables: dbbench ...",):
            kw["on_result"](cluster.Outcome(points[0], ([row], [line])))
        return [cluster.Outcome(points[0], ([row], [])), *[cluster.Outcome(p, error="ReportError: boom")
                                                          for p in points[1:]]]

    monkeypatch.setattr(cluster, "run", outcomes)
    assert demo.main(["tables", "--cluster"]) == 1
    md = (tmp_path / "tables.md").read_text()
    assert "task(s) failed" in md and "key64, compression none: ReportError: boom" in md
    assert (tmp_path / "tables.csv").read_text().count("\n") == 2  # the header and the finished case's row

    def interrupted(client, fn, points, **kw):
        raise cluster.Interrupted([cluster.Outcome(points[0], ([row], []))])

    monkeypatch.setattr(cluster, "run", interrupted)
    assert demo.main(["tables", "--cluster"]) == 130
    assert "Interrupted: 1 of 3 cases finished." in (tmp_path / "tables.md").read_text()
    assert "interrupted" in capsys.readouterr().out


def test_leveldb_test_prints_the_serial_lines(monkeypatch, tmp_path, capsys):
    """`leveldb test --cluster` prints what the serial run prints for the same per-binary results (no
    cluster: the outcomes faked), in the serial order; a binary whose task failed is counted as failed."""
    import contextlib

    from lsmc import leveldb as ldb

    names = ["b_test", "a_test", "c_test"]
    for n in names:
        (tmp_path / n).touch()
    monkeypatch.setattr(ldb, "BIN", tmp_path)
    monkeypatch.setattr(ldb, "check_built", lambda: None)
    log = ldb.OffloadLog(offloaded=3, entries=40, jobs=3)
    res = {"b_test": (None, ldb.BinResult("b_test", 5, 0, 0, 1.5, [], log)),
           "a_test": (ldb.BinResult("a_test", 1, 1, 1, 0.5, ["A.x"], ldb.OffloadLog()), None),
           "c_test": (None, ldb.BinResult("c_test", 1, 1, 1, 2.0, ["c_test (exit status 1)"], log))}
    monkeypatch.setattr(ldb, "judge_binary", lambda name, no_stock, flt, backend: res[name])
    monkeypatch.setattr(ldb, "stock_cross_check", lambda **_backend: (True, "fine"))
    serial_rc = ldb.main(["test", *names])
    serial = capsys.readouterr().out

    def fake_run(client, fn, points, label):  # run() gives the outcomes in the points' order
        return [cluster.Outcome(p, (True, "fine") if p[0] == "cross-check" else res[p[1]]) for p in points]

    monkeypatch.setattr(cluster, "connect", lambda address: contextlib.nullcontext())
    monkeypatch.setattr(cluster, "run", fake_run)
    assert ldb.main(["test", *names, "--cluster"]) == serial_rc == 1
    assert capsys.readouterr().out == serial
    monkeypatch.setattr(cluster, "run", lambda client, fn, points, label: [
        cluster.Outcome(p, error="KilledWorker: gone") if p[1:2] == ("c_test",) else
        cluster.Outcome(p, (True, "fine") if p[0] == "cross-check" else res[p[1]]) for p in points])
    assert ldb.main(["test", *names, "--cluster"]) == 1
    out = capsys.readouterr().out
    assert "c_test                     FAILED as a task: KilledWorker: gone" in out and "6 passed, 1 failed" in out


@pytest.mark.filterwarnings("error:Sending large graph")
def test_shared_data_goes_to_the_workers_once(client):
    """Data every task needs (a seed sweep's netlist of ~10 MB) is scattered once with `shared`, so the task
    graph stays under Dask's large-graph warning (an error here); inside each task's point it is not."""
    big = bytes(12 << 20)
    with pytest.warns(UserWarning, match="Sending large graph"):  # the check below can fail
        assert cluster.run(client, _length, [(big, 1)], progress=False)[0].value == len(big) + 1
    out = cluster.run(client, _length_shared, [1, 2, 3], shared=big, progress=False)
    assert [o.value for o in out] == [len(big) + x for x in (1, 2, 3)]


# ---- the console suite (lsmc console-suite) ------------------------------------------------------------------
def _untimed(xml_text: str) -> bytes:
    """A JUnit file without its time attributes (what differs between two runs of the same tests)."""
    import xml.etree.ElementTree as ET
    top = ET.fromstring(xml_text)
    for el in top.iter():
        el.attrib.pop("time", None)
    return ET.tostring(top)


@pytest.mark.slow
def test_console_suite_groups_as_tasks_write_the_serial_file(client, tmp_path, capsys):
    """Console tests on the SoC simulator in one pytest, then dealt into three groups on the 2-worker cluster
    (each group's pytest starting a simulator of its own): the same JUnit file but for its times."""
    from lsmc import console_suite as cs

    sel = ["--target", "sim", "-k", "help or banner or empty_and_blank"]
    assert cs.main([*sel, "--junitxml", str(tmp_path / "serial.xml")]) == 0
    assert cs.main([*sel, "--groups", "3", "--junitxml", str(tmp_path / "cluster.xml"),
                    "--cluster", client.scheduler.address]) == 0
    serial, tasks = ((tmp_path / f).read_text() for f in ("serial.xml", "cluster.xml"))
    assert _untimed(serial) == _untimed(tasks)
    assert serial.count("<testcase ") == 4 and "<failure" not in serial and "<error" not in serial
    out, err = capsys.readouterr()
    assert err.count("console-suite: group of ") == 3 and "passed" in out


def test_console_suite_names_a_failed_group_and_keeps_an_interrupted_run(monkeypatch, tmp_path, capsys):
    """(No cluster: the groups' outcomes faked.) A group whose task failed after its retry is in the file as an
    error per test naming the failure, beside the finished group's results, exit 1; Ctrl-C writes the finished
    groups' results and counts the others as not run, exit 130."""
    import contextlib
    import xml.etree.ElementTree as ET

    from lsmc import console_suite as cs

    ids = ["tests/console/test_console.py::test_a", "tests/console/test_console.py::test_b",
           "tests/console/test_console.py::test_c[1]"]
    junit = ('<testsuites><testsuite name="pytest"><testcase classname="tests.console.test_console" name="test_a" '
             'time="1.5"/><testcase classname="tests.console.test_console" name="test_c[1]" time="2">'
             '<failure message="assert 1 == 2">trace</failure></testcase></testsuite></testsuites>')
    monkeypatch.setattr(cs, "collect", lambda target, port, select: ids)
    monkeypatch.setattr(cluster, "connect", lambda address: contextlib.nullcontext())

    def outcomes(client, fn, points, **kw):
        assert [p[2] for p in points] == [(ids[0], ids[2]), (ids[1],)]  # round robin
        done = [cluster.Outcome(points[0], junit), cluster.Outcome(points[1], error="SuiteError: pytest exit 3")]
        for o in done:
            kw["on_result"](o)
        return done

    monkeypatch.setattr(cluster, "run", outcomes)
    out_file = tmp_path / "c.xml"
    assert cs.main(["--groups", "2", "--junitxml", str(out_file), "--cluster"]) == 1
    cases = list(ET.parse(out_file).getroot().iter("testcase"))
    assert [c.get("name") for c in cases] == ["test_a", "test_b", "test_c[1]"]  # the suite's order
    assert "pytest exit 3" in cases[1].find("error").get("message")
    out = capsys.readouterr().out
    assert "FAILED tests/console/test_console.py::test_c[1]: assert 1 == 2" in out
    assert "ERROR tests/console/test_console.py::test_b: task failed: SuiteError: pytest exit 3" in out
    assert "1 passed, 1 failed, 1 errors" in out

    def interrupted(client, fn, points, **kw):
        raise cluster.Interrupted([cluster.Outcome(points[0], junit)])

    monkeypatch.setattr(cluster, "run", interrupted)
    assert cs.main(["--groups", "2", "--junitxml", str(out_file), "--cluster"]) == 130
    assert [c.get("name") for c in ET.parse(out_file).getroot().iter("testcase")] == ["test_a", "test_c[1]"]
    assert "1 not run (interrupted)" in capsys.readouterr().out


def test_console_suite_refuses_what_it_cannot_run(tmp_path, capsys):
    """One line and exit 2, before any simulator: a board's one serial line as cluster tasks, a board without a
    port, a selection no test matches, a scheduler that does not answer."""
    from lsmc import console_suite as cs

    assert cs.main(["--target", "board", "--port", "/dev/null", "--cluster"]) == 2
    assert cs.main(["--target", "board"]) == 2
    assert cs.main(["-k", "no_such_console_test_xyz", "--junitxml", str(tmp_path / "x.xml")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 3, err
    assert "one serial line" in err[0] and "needs --port" in err[1]
    assert "no test of tests/console matches -k 'no_such_console_test_xyz'" in err[2]
    assert not (tmp_path / "x.xml").exists()
    addr = f"tcp://127.0.0.1:{_closed_port()}"
    assert cs.main(["-k", "help", "--junitxml", str(tmp_path / "x.xml"), "--cluster", addr]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no Dask scheduler answers" in err and addr in err, err
    assert not (tmp_path / "x.xml").exists()


def test_console_suite_groups_balanced_by_an_earlier_run(tmp_path):
    """The groups take the earlier run's times (the JUnit file the run replaces): the longest test first to the
    least loaded group, each group in collection order; no file or an unreadable one: round robin."""
    from lsmc import console_suite as cs

    ids = [f"tests/console/test_console.py::t{i}" for i in range(6)]
    secs = dict(zip(ids, [500, 10, 20, 30, 400, 40]))
    groups = cs.split(ids, 2, secs)
    assert groups == [(ids[0],), (ids[1], ids[2], ids[3], ids[4], ids[5])]  # 500 s against 500 s
    assert cs.split(ids, 3, secs) == [(ids[0],), (ids[4],), (ids[1], ids[2], ids[3], ids[5])]
    assert cs.split(ids, 2) == [tuple(ids[0::2]), tuple(ids[1::2])]
    assert cs.split(ids, 2, {ids[0]: 100.0}) == cs.split(ids, 2, {ids[0]: 100.0})  # unknown ones: the median
    junit = tmp_path / "old.xml"
    junit.write_text('<testsuites><testsuite><testcase classname="tests.console.test_console" name="t0" time="7.5"/>'
                     '<testcase classname="tests.console.test_console" name="t1" time="x"/></testsuite></testsuites>')
    assert cs.earlier_times(junit) == {ids[0]: 7.5}
    junit.write_text("<testsuites")
    assert cs.earlier_times(junit) == {} and cs.earlier_times(tmp_path / "none.xml") == {}
