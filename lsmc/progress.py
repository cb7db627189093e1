"""What a user sees on long work: a step that is still running after a few seconds (a Mill compile, a
Verilator build, a firmware build, a simulation) announces itself on stderr, and says when it ends how
long it took; a quick step, or an up-to-date one, prints nothing."""
from __future__ import annotations

import contextlib
import sys
import threading
import time

AFTER_S = 3.0  # a step quicker than this stays silent


@contextlib.contextmanager
def step(what: str, after: float = AFTER_S, stream=None):
    """`with step("mill soc.Generate"):` prints `lsmc: mill soc.Generate ...` once the step has run
    `after` seconds, and `lsmc: mill soc.Generate: 93 s` when it ends (also when it fails)."""
    out = stream or sys.stderr
    t0 = time.monotonic()
    lock = threading.Lock()
    shown = []

    def announce():
        with lock:
            if shown is not None:
                shown.append(True)
                _say(out, f"lsmc: {what} ...")

    timer = threading.Timer(after, announce)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        with lock:
            was_shown, shown = bool(shown), None
        if was_shown:
            _say(out, f"lsmc: {what}: {time.monotonic() - t0:.0f} s")


def _say(out, line: str) -> None:
    with contextlib.suppress(OSError, ValueError):  # progress never fails the work it reports on
        print(line, file=out, flush=True)
