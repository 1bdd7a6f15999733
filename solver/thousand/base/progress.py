"""Progress lines for long solves, and the memory a solve took.

A solver calls a :class:`Progress` as it sweeps (the step and its largest change) or
counts its work (:meth:`Progress.fraction`); the line goes to stderr.
"""

from __future__ import annotations

import sys
import time

__all__ = ["Progress", "duration_text", "peak_memory_mb"]


def _bar(frac: float, width: int = 20) -> str:
    """A progress bar of ``width`` cells, one ``#`` per whole share done. The share is
    rounded to 1e-9 first: times are differences of large clock readings, and 120 s of
    600 must fill four cells, not three."""
    return ("#" * int(round(width * frac, 9))).ljust(width)


class Progress:
    """A progress line on stderr, shown once a solve has run for a second: the step, the
    largest change, the time so far and, given the solve's ``expected`` seconds
    (:func:`estimate`), a bar and roughly the time left. On a terminal the line is
    redrawn in place; elsewhere (a log, a pipe) a new line at most every 10 s."""

    def __init__(self, label: str, enabled: bool = True, expected: float | None = None):
        self.label, self.enabled, self.expected = label, enabled, expected
        self.t0 = self.last = time.perf_counter()
        self.shown = False
        self._most = 0.0  # the largest share shown by sweeps(): its bar never moves back
        self.tty = sys.stderr.isatty()

    def line(self, step: int, change: float, now: float) -> str:
        el = now - self.t0
        text = f"{self.label}: sweep {step}, largest change {change:.3e}, {el:.0f} s"
        if self.expected:
            frac = min(el / self.expected, 0.99)
            left = self.expected - el
            text += f" [{_bar(frac)}] roughly {left:.0f} s left" if left > 0 else " [longer than estimated]"
        return text

    def __call__(self, step: int, change: float) -> None:
        now = time.perf_counter()
        if self._due(now):
            self._show(self.line(step, change, now))

    def _due(self, now: float) -> bool:
        return self.enabled and now - self.t0 >= 1.0 and (self.tty or not self.shown or now - self.last >= 10.0)

    def _show(self, text: str) -> None:
        self.shown, self.last = True, time.perf_counter()
        sys.stderr.write(("\r" + text + "   ") if self.tty else text + "\n")
        sys.stderr.flush()

    def fraction(self, done: int, total: int) -> None:
        """A solve that counts its work (``done`` of ``total``): the share done instead of a sweep."""
        now = time.perf_counter()
        if not self._due(now):
            return
        el, frac = now - self.t0, min(done / max(total, 1), 1.0)
        left = f", roughly {el / frac - el:.0f} s left" if frac > 0.02 else ""
        self._show(f"{self.label}: {done:,} of {total:,} states [{_bar(frac)}] {el:.0f} s{left}")

    def sweeps(self, done: int, total: int, sweep: int = 1, sweeps: int = 1) -> None:
        """A solve that sweeps ``total`` states ``sweeps`` times (an estimate that may grow
        as it learns how fast the values settle): ``done`` states of sweep ``sweep``. The
        count of states stays the sweep's own, so it never jumps; the bar and the time
        left are over the sweeps expected, and never move back."""
        if sweeps <= 1:
            self.fraction(done, total)
            return
        now = time.perf_counter()
        if not self._due(now):
            return
        el = now - self.t0
        frac = min(((sweep - 1) * total + done) / (sweeps * total), 1.0)
        frac = self._most = max(frac, self._most)
        left = f", roughly {duration_text(el / frac - el)} left" if frac > 0.02 else ""
        self._show(
            f"{self.label}: sweep {sweep} of about {sweeps}, {done:,} of {total:,} states "
            f"[{_bar(frac)}] {el:.0f} s{left}"
        )

    def levels(self, info: dict) -> None:
        """A solve by levels (on a cluster): its pass, levels done of the total,
        the rate in pairs (or ``info["unit"]``) per second and roughly the time left in the
        pass (``info``: ``pass``, ``level``, ``levels``, ``pairs_done``, ``pairs``, ``change``)."""
        if not self.enabled:
            return
        now = time.perf_counter()
        if not hasattr(self, "_pass") or self._pass != info["pass"]:
            self._pass, self._pass_t0 = info["pass"], now
        if not self._due(now) and info["level"] < info["levels"]:
            return
        el = now - self._pass_t0
        rate = info["pairs_done"] / el if el > 0 else 0.0
        left = (info["pairs"] - info["pairs_done"]) / rate if rate > 0 else 0.0
        frac = info["level"] / max(info["levels"], 1)
        self._show(
            f"{self.label}: pass {info['pass']}, level {info['level']:,} of {info['levels']:,} [{_bar(frac)}] "
            f"{rate:,.0f} {info.get('unit', 'pairs')}/s, roughly {duration_text(left)} left in the pass, "
            f"largest change {info['change']:.3e}"
        )

    def close(self) -> None:
        if self.shown and self.tty:
            sys.stderr.write("\n")
            sys.stderr.flush()


def peak_memory_mb() -> float:
    """Peak resident memory of this process so far, in MiB."""
    import resource

    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)


def duration_text(seconds: float) -> str:
    """A duration as a person reads it: seconds up to two minutes, then minutes, then hours."""
    m = seconds / 60
    return f"{seconds:,.0f} seconds" if m < 2 else f"{m:,.0f} minutes" if m < 120 else f"{m / 60:,.1f} hours"
