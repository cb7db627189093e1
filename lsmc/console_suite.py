"""`lsmc console-suite`: the firmware console's test suite (tests/console, docs/console.md) on a target, in one
pytest run or as Dask tasks (`--cluster`, docs/cluster.md), with its results in one JUnit XML file.

    lsmc console-suite --target boardsim                 # one pytest run: results/console-boardsim.xml
    lsmc console-suite --target boardsim --cluster       # groups of tests as tasks, one worker per core
    lsmc console-suite --target sim -k help --cluster tcp://HOST:8786

Each task runs its group in a pytest of its own on its worker, against a simulator of its own (the suite's
`endpoint` fixture starts one per test module on a free loopback port; the board simulation's build is made
once per machine under a lock and reused). The groups are balanced by the tests' times in the file the run
replaces (longest first, to the least loaded group), dealt round robin without one. The serial run is the
same code with one group, so both write the same file: the test cases in the suite's collection order, each
with its outcome and message (only the `time` attributes differ). A task whose pytest cannot run its group
(an internal or usage error, a test that hangs past the task's limit) is retried once, then its tests are
reported as errors naming the task's failure: never dropped. A physical board has one serial line:
`--target board` runs serially only.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from lsmc import cliutil
from lsmc.paths import RESULTS, ROOT

SUITE = "tests/console"
TARGETS = ("sim", "boardsim", "board")  # tests/console/conftest.py TARGETS
GROUP_TIMEOUT = 4 * 3600  # seconds a group may take (the whole suite on the board simulation: ~22 min)


class SuiteError(cliutil.CliError):
    """The suite cannot be collected or a group's pytest did not run its tests (exit 2 for the tool)."""


def _pytest(args: list[str], timeout: float | None = None) -> subprocess.CompletedProcess:
    # -p no:cacheprovider: tasks on one machine share the checkout, and the suite needs no cache
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def _target_args(target: str, port: str | None) -> list[str]:
    return ["--target", target, *(["--port", port] if port else [])]


def collect(target: str, port: str | None = None, select: str | None = None) -> list[str]:
    """The suite's test ids on `target` (with `-k select`), in pytest's collection order."""
    r = _pytest(["--collect-only", "-q", SUITE, *_target_args(target, port), *(["-k", select] if select else [])])
    ids = [ln for ln in r.stdout.splitlines() if ln.startswith(SUITE + "/") and "::" in ln]
    if r.returncode not in (0, 5) or (r.returncode == 0 and not ids):
        raise SuiteError(f"collecting {SUITE} failed (pytest exit {r.returncode}): "
                         f"{(r.stdout + r.stderr).strip().splitlines()[-1:]}")
    if not ids:
        raise SuiteError(f"no test of {SUITE} matches -k {select!r}")
    return ids


def split(ids: list[str], groups: int, seconds: dict[str, float] | None = None) -> list[tuple[str, ...]]:
    """`ids` dealt into at most `groups` groups, each in collection order. With `seconds` (a test's time in an
    earlier run; a test without one counts as the median) the longest test goes first to the group with the
    least time so far (longest processing time first), so one long test does not leave a worker alone at the
    end; without them, round robin."""
    n = max(1, min(groups, len(ids)))
    if not seconds:
        return [tuple(ids[i::n]) for i in range(n)]
    known = sorted(v for v in (seconds.get(t) for t in ids) if v is not None)
    default = known[len(known) // 2] if known else 1.0
    weight = {t: seconds.get(t, default) for t in ids}
    load, members = [0.0] * n, [[] for _ in range(n)]
    for t in sorted(ids, key=lambda t: -weight[t]):
        g = load.index(min(load))
        load[g] += weight[t]
        members[g].append(t)
    order = {t: i for i, t in enumerate(ids)}
    return [tuple(sorted(m, key=order.get)) for m in members if m]


def earlier_times(path: Path) -> dict[str, float]:
    """Each test's time in the JUnit file an earlier run wrote at `path` ({} when there is none or it does not
    parse: the groups are then dealt round robin)."""
    try:
        top = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return {}
    out = {}
    for case in top.iter("testcase"):
        try:
            out[_key(case.get("classname", ""), case.get("name", ""))] = float(case.get("time", ""))
        except ValueError:
            continue
    return out


def _key(classname: str, name: str) -> str:
    """A JUnit test case's test id as pytest collects it (classname tests.console.test_x[.Class])."""
    parts = classname.split(".")
    for i in range(len(parts), 0, -1):  # the longest prefix that is a test file
        f = "/".join(parts[:i]) + ".py"
        if (ROOT / f).is_file():
            return "::".join([f, *parts[i:], name])
    return f"{classname}::{name}"


def run_group(point: tuple) -> str:
    """A task: (target, port, ids) run by one pytest on this machine; returns its JUnit XML. A pytest that did not
    run the group (exit other than 0 or 1: interrupted, internal or usage error, no tests) raises SuiteError."""
    target, port, ids = point
    with tempfile.TemporaryDirectory(prefix="lsmc-console-") as tmp:
        xml = Path(tmp) / "junit.xml"
        try:
            r = _pytest(["-q", "-o", "junit_family=xunit1", f"--junitxml={xml}", *_target_args(target, port),
                         *ids], timeout=GROUP_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise SuiteError(f"the group ({len(ids)} tests from {ids[0]}) ran past {GROUP_TIMEOUT} s") from None
        if r.returncode not in (0, 1) or not xml.is_file():
            tail = (r.stdout + r.stderr).strip().splitlines()[-3:]
            raise SuiteError(f"pytest exit {r.returncode} on the group from {ids[0]}: {' | '.join(tail)}")
        return xml.read_text()


def merge(ids: list[str], results: dict[tuple, str], failed: dict[tuple, str] | None = None) -> ET.Element:
    """One <testsuites> holding every test case of `ids` in that order: from each group's JUnit XML
    (`results`: group -> XML text) or, for a group whose task failed (`failed`: group -> error), an <error>
    naming the task's failure. A test no group reports (interrupted run) is left out."""
    cases: dict[str, ET.Element] = {}
    for text in results.values():
        for case in ET.fromstring(text).iter("testcase"):
            cases[_key(case.get("classname", ""), case.get("name", ""))] = case
    for group, error in (failed or {}).items():
        for tid in group:
            f, _, rest = tid.partition("::")
            parts = rest.split("::")
            case = ET.Element("testcase", classname=".".join([f[:-3].replace("/", "."), *parts[:-1]]),
                              name=parts[-1], time="0")
            ET.SubElement(case, "error", message=f"task failed: {error}")
            cases[tid] = case
    suite = ET.Element("testsuite", name="console-suite")
    count = {"tests": 0, "errors": 0, "failures": 0, "skipped": 0}
    total = 0.0
    for tid in ids:
        case = cases.get(tid)
        if case is None:
            continue
        suite.append(case)
        count["tests"] += 1
        for tag, key in (("error", "errors"), ("failure", "failures"), ("skipped", "skipped")):
            count[key] += case.find(tag) is not None
        total += float(case.get("time", "0") or 0)
    for k, v in count.items():
        suite.set(k, str(v))
    suite.set("time", f"{total:.3f}")
    top = ET.Element("testsuites")
    top.append(suite)
    ET.indent(top)
    return top


def summary(top: ET.Element) -> tuple[dict, list[str]]:
    """Counts (passed, failed, errors, skipped) and a line per test that did not pass."""
    counts = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0}
    lines = []
    for case in top.iter("testcase"):
        tid = _key(case.get("classname", ""), case.get("name", ""))
        for tag, key in (("failure", "failed"), ("error", "errors"), ("skipped", "skipped")):
            el = case.find(tag)
            if el is not None:
                counts[key] += 1
                if key != "skipped":
                    msg = (el.get("message") or "").splitlines()
                    label = "FAILED" if key == "failed" else "ERROR"
                    lines.append(f"{label} {tid}" + (f": {msg[0][:200]}" if msg else ""))
                break
        else:
            counts["passed"] += 1
    return counts, lines


def _counts_text(counts: dict) -> str:
    return ", ".join(f"{v} {k}" for k, v in counts.items() if v or k == "passed")


def run_suite(target: str, port: str | None, ids: list[str], groups: int, address: str | None,
              log=print, seconds: dict[str, float] | None = None) -> tuple[ET.Element, int]:
    """The suite's `ids` serially (address None: one pytest) or as Dask tasks, groups balanced by `seconds` (an
    earlier run's times) when given; (merged results, status): 0 every group ran, 1 a group's task failed, 130
    interrupted (the finished groups' results kept)."""
    if address is None:
        whole = tuple(ids)
        return merge(ids, {whole: run_group((target, port, whole))}), 0
    from lsmc import cluster
    status = 0
    with cluster.connect(address or None) as client:  # a scheduler that does not answer: one line, nothing run
        log(f"console-suite: {len(ids)} tests on {target} (Dask tasks)")
        if not groups:  # two groups per worker: a long group does not hold the last worker alone
            groups = 2 * max(1, len(client.scheduler_info(n_workers=-1)["workers"]))
        parts = split(ids, groups, seconds)

        def done(o):
            if o.ok:
                c, _ = summary(merge(list(o.point[2]), {o.point[2]: o.value}))
                log(f"console-suite: group of {len(o.point[2])} from {o.point[2][0]}: {_counts_text(c)}")
            else:
                log(f"console-suite: group of {len(o.point[2])} from {o.point[2][0]}: task failed: {o.error}")
        try:
            outcomes = cluster.run(client, run_group, [(target, port, g) for g in parts], label="console-suite",
                                   on_result=done)
        except cluster.Interrupted as e:
            outcomes, status = e.outcomes, 130
    results = {o.point[2]: o.value for o in outcomes if o.ok}
    failed = {o.point[2]: o.error for o in outcomes if not o.ok}
    if failed and status == 0:
        status = 1
    return merge(ids, results, failed), status


@cliutil.tool_main("console-suite")
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="console-suite", description=__doc__.split("\n\n")[0])
    ap.add_argument("--target", choices=TARGETS, default="sim",
                    help="sim: the SoC simulator; boardsim: the LiteX board simulation; board: a board's serial "
                         "line (--port; serial only)")
    ap.add_argument("--port", metavar="URL", help="the board's serial line (--target board), e.g. /dev/ttyUSB1")
    ap.add_argument("-k", dest="select", metavar="EXPR", help="only the tests pytest's -k EXPR selects")
    ap.add_argument("--groups", type=cliutil.int_option(1, 1000), default=0, metavar="N",
                    help="with --cluster: the tests dealt into N tasks (default two per worker)")
    ap.add_argument("--junitxml", type=Path, metavar="FILE",
                    help="the results (default results/console-TARGET.xml)")
    from lsmc import cluster
    cluster.add_option(ap, "groups of the suite's tests")
    a = ap.parse_args(argv)
    if a.target == "board" and a.cluster is not None:
        print("console-suite: --target board has one serial line: its tests run in one pytest, not as "
              "--cluster tasks", file=sys.stderr)
        return 2
    if a.target == "board" and not a.port:
        print("console-suite: --target board needs --port (e.g. /dev/ttyUSB1)", file=sys.stderr)
        return 2
    if a.junitxml is None:
        cliutil.make_output_dir(RESULTS)
    out = a.junitxml or RESULTS / f"console-{a.target}.xml"
    cliutil.check_output_file(out, "--junitxml")
    ids = collect(a.target, a.port, a.select)
    t0 = time.time()
    if a.cluster is None:
        print(f"console-suite: {len(ids)} tests on {a.target} (one pytest)", file=sys.stderr)
    # The groups are balanced by the times of the file this run replaces (an earlier run's), when there is one.
    top, status = run_suite(a.target, a.port, ids, a.groups, a.cluster, log=lambda s: print(s, file=sys.stderr),
                            seconds=earlier_times(out) if a.cluster is not None else None)
    counts, lines = summary(top)
    cliutil.write_output(out, ET.tostring(top, encoding="unicode", xml_declaration=True) + "\n")
    for ln in lines:
        print(ln)
    missing = len(ids) - sum(counts.values())
    tail = f", {missing} not run (interrupted)" if missing else ""
    print(f"console-suite: {_counts_text(counts)}{tail} in {time.time() - t0:.0f} s on {a.target}; {out}")
    if status:
        return status
    return 1 if counts["failed"] or counts["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
