"""How many OpenMP threads a pass may use right now: the cores the machine has free.

A step of an online learner is short (microseconds to a millisecond), so its parallel region is
short too, and it ends only when every thread of the team has done its share.  On a busy machine
the scheduler takes a thread away for a whole time slice (milliseconds), and every region waits
for it: a run that takes 1.3 s on two free cores took 118 s beside two CPU-bound programs, where
one thread took 1.5 s.  So a core's team is never larger than the cores other programs leave
free, and the question is asked again while a pass runs (``LearnerCore.run`` at most every
``POLICY.interval`` seconds), so a pass that starts on a quiet machine steps down when the machine
fills up, and back up when it empties.  Results never depend on the thread count.

"Free" is read from the kernel's count of runnable threads (``/proc/loadavg``, which counts every
thread that is running or waiting for a core), minus this process's own runnable threads
(``/proc/self/task/*/stat``): ``free = usable cores - others``.  The count is instantaneous, so
stepping down happens at once and stepping up only after two readings in a row agree (a
short-lived program does not make a pass flip back and forth).  Where ``/proc`` is missing (not
Linux) every usable core counts as free.  In a container that shares a larger host, the host's
other programs count as busy: the policy errs toward fewer threads, never toward waiting.
"""
import os
import time

import joblib

INTERVAL = 0.25            # seconds between two readings of the machine during a pass


def usable_cores():
    """Cores this process may run on (affinity and cgroup quota, as ``joblib.cpu_count``)."""
    return max(1, int(joblib.cpu_count()))


def _runnable_total():
    """Runnable threads on the machine (``/proc/loadavg``'s fourth field), or None."""
    try:
        with open("/proc/loadavg", "rb") as f:
            return int(f.read().split()[3].split(b"/")[0])
    except (OSError, IndexError, ValueError):
        return None


def _runnable_own():
    """This process's threads that are running or runnable (state R)."""
    n = 0
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return 1
    for tid in tids:
        try:
            with open(f"/proc/self/task/{tid}/stat", "rb") as f:
                s = f.read()
        except OSError:             # the thread ended meanwhile
            continue
        # the state follows the command name in parentheses, which may itself hold ')'
        if s[s.rfind(b")") + 2:s.rfind(b")") + 3] == b"R":
            n += 1
    return max(n, 1)                # the reading thread itself runs


def busy_cores():
    """Runnable threads of other programs right now (0 where the system does not say)."""
    total = _runnable_total()
    if total is None:
        return 0
    return max(0, total - _runnable_own())


class ThreadPolicy:
    """Decides a pass's thread count from the cores free now; remembers the last readings.

    Parameters
    ----------
    reader : callable, optional
        Returns the number of other programs' runnable threads (default :func:`busy_cores`);
        tests pass their own.
    cores : int, optional
        Usable cores (default :func:`usable_cores`).
    clock : callable, optional
        Seconds, monotonic (default ``time.monotonic``).

    Attributes
    ----------
    interval : float
        Seconds between two readings (:data:`INTERVAL`); a running pass looks again as often.
    """

    def __init__(self, reader=None, cores=None, clock=None):
        self.reader = busy_cores if reader is None else reader
        self.cores = usable_cores() if cores is None else int(cores)
        self.clock = time.monotonic if clock is None else clock
        self.interval = INTERVAL
        self.last = None           # time of the last reading
        self.reading = None        # cores free at the last reading
        self.free = None           # cores the policy counts as free (None before any reading)

    def threads(self, wanted, force=False):
        """Threads to use now, between 1 and ``wanted``.

        Reads the machine at most every ``interval`` seconds (``force``: read now).  The
        free count goes down with one reading and up only when two readings in a row allow it.
        """
        wanted = max(1, int(wanted))
        if wanted == 1:
            return 1
        t = self.clock()
        if force or self.last is None or t - self.last >= self.interval:
            r = max(1, self.cores - int(self.reader()))
            if self.free is None or r < self.free:
                self.free = r
            elif r > self.free and self.reading is not None and self.reading > self.free:
                self.free = min(r, self.reading)
            self.reading = r
            self.last = t
        return min(wanted, self.free)


# One policy for the process: every core asks it, so their readings share one clock.
POLICY = ThreadPolicy()
