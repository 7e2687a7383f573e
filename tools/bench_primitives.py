"""Micro-benchmarks of the machine's primitives, for onlinekern's per-learner cost model (issue 7).

``tools/primitives.c`` includes ``include/ok_vmath.h`` and ``include/ok_kernel.h``, so every
primitive runs the learners' own code; it is compiled here as setup.py compiles the extensions
(Python's CFLAGS + CCSHARED, setup.py's flags read with ``ast``, ``-fopenmp`` and
``-DOK_HAVE_LIBMVEC=1 -lmvec`` when setup.py's probes pass) and timed at every SIMD level the CPU
has (base = SSE2 / scalar libm, avx2, avx512; ONLINEKERN_SIMD caps): the compute roof and the
core clock; ``ok_dot`` / ``ok_axpy`` / ``ok_sqdist``; ``ok_vcossin``, ``ok_vexp`` and libm's
``sincos``; streaming reads at 16 KB ... 256 MB, FOGD's projection and two composites; the
Gaussian kernel row of ``SupportSet._block`` at B = 1000.  Each figure is the median of ``--reps``
loops of ~``--target-ms`` of thread CPU time (wall/CPU in the JSON says how contended the run
was), one thread.  ``--native`` adds a ``-march=native`` build; a ``-fno-wrapv`` build checks that
``ok_dot`` / ``ok_sqdist`` stay vectorised under Python's ``-fwrapv`` (its rows must equal the
portable ones).  docs/performance.md section 1 reads the figures, and says which are noisy
(base-level loops are alignment-sensitive: read them as +-2x).

    python tools/bench_primitives.py                        # portable build, ~1 min of CPU
    python tools/bench_primitives.py --native --json primitives.json
    python tools/bench_primitives.py --target-ms 5 --reps 3   # quick smoke run
"""
import ast
import json
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
import time
from pathlib import Path

import harness as h

from onlinekern.io.atomic import atomic_write

SRC = h.REPO / "tools" / "primitives.c"
INCLUDE = h.REPO / "include"
SETUP = h.REPO / "setup.py"

# setup.py's extensions() flags, used when they cannot be read from setup.py (kept in sync by hand)
FALLBACK_FLAGS = ["-O3", "-fno-math-errno", "-ffp-contract=off", "-Wno-unused-function", "-Wno-unreachable-code"]


# ---- build --------------------------------------------------------------------------------

def setup_py_parts():
    """(compile flags, OpenMP probe source, libmvec probe source) as setup.py defines them.

    Read with ``ast`` (importing setup.py would run setup()), so a change of flags or probes in
    setup.py is followed here.  Falls back to FALLBACK_FLAGS with a warning.
    """
    tree = ast.parse(SETUP.read_text())
    probes = {}
    flags = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            val = node.value
            if name in ("OPENMP_PROBE", "LIBMVEC_PROBE") and isinstance(val, ast.Call) and val.args:
                probes[name] = textwrap.dedent(ast.literal_eval(val.args[0]))
            if name == "compile_args" and isinstance(val, ast.IfExp):
                flags += ast.literal_eval(val.orelse)       # the non-debug branch
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) \
                and node.target.id == "compile_args" and isinstance(node.value, ast.List):
            flags += ast.literal_eval(node.value)
    if not flags:
        print("warning: could not read the compile flags from setup.py; using " + " ".join(FALLBACK_FLAGS),
              file=sys.stderr)
        flags = list(FALLBACK_FLAGS)
    for name in ("OPENMP_PROBE", "LIBMVEC_PROBE"):
        if name not in probes:
            sys.exit(f"error: setup.py no longer defines {name}; update tools/bench_primitives.py")
    return flags, probes["OPENMP_PROBE"], probes["LIBMVEC_PROBE"]


def probe(cc, source, cflags, libs, tmp):
    """Compile, link and run a probe the way setup.py's _probe does; True if all succeed."""
    src = Path(tmp) / "probe.c"
    exe = Path(tmp) / "probe"
    src.write_text(source)
    r = subprocess.run([cc, *cflags, str(src), "-o", str(exe), *libs], capture_output=True, text=True)
    if r.returncode != 0:
        return False
    return subprocess.run([str(exe)], capture_output=True).returncode == 0


MISSING = (("cannot find -lmvec", "glibc's libmvec (libmvec.so; the libc6-dev package on Debian/Ubuntu)"),
           ("cannot find -lm", "the C math library (libm; libc6-dev)"),
           ("ok_vmath.h", f"onlinekern's headers in {INCLUDE} (ok_vmath.h / ok_kernel.h)"),
           ("ok_kernel.h", f"onlinekern's headers in {INCLUDE} (ok_vmath.h / ok_kernel.h)"),
           ("immintrin.h", "the compiler's x86 intrinsics headers (immintrin.h): an x86-64 gcc is needed"),
           ("omp.h", "OpenMP support (libgomp)"), ("gomp", "OpenMP support (libgomp)"),
           ("stdio.h", "the C library headers (libc6-dev)"), ("math.h", "the C library headers (libc6-dev)"),
           ("x86-64", "an x86-64 target (ok_vmath.h's dispatch levels are x86-only)"))


def diagnose(stderr, cmd):
    """Name the missing piece from a failed gcc run."""
    text = stderr.lower()
    return next((what for key, what in MISSING if key in text),
                "see the compiler output above; command: " + " ".join(map(shlex.quote, cmd)))


def build(out_dir, native=False, extra=(), tag=""):
    """Compile tools/primitives.c like setup.py compiles the extensions; returns (exe, info).

    ``extra`` flags go last (so ``-fno-wrapv`` overrides Python's ``-fwrapv``)."""
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or "gcc"
    cc = shlex.split(cc)[0]
    if shutil.which(cc) is None:
        sys.exit(f"error: C compiler '{cc}' not found (install gcc, or set CC)")
    for p in (SRC, INCLUDE / "ok_vmath.h", INCLUDE / "ok_kernel.h", SETUP):
        if not p.exists():
            sys.exit(f"error: missing {p}")
    flags, omp_src, mvec_src = setup_py_parts()
    with tempfile.TemporaryDirectory(prefix="ok-prim-probe-") as tmp:
        use_omp = os.environ.get("ONLINEKERN_NO_OPENMP", "0") != "1" and \
            probe(cc, omp_src, ["-fopenmp"], ["-fopenmp"], tmp)
        use_mvec = sys.platform.startswith("linux") and probe(cc, mvec_src, [], ["-lmvec"], tmp)
    # what build_ext passes: Python's CFLAGS and CCSHARED, then the extension's extra args
    cflags = shlex.split(sysconfig.get_config_var("CFLAGS") or "") + \
        shlex.split(sysconfig.get_config_var("CCSHARED") or "") + flags
    if native:
        cflags.append("-march=native")
    cflags += list(extra)
    libs = ["-lm"]
    if use_omp:
        cflags.append("-fopenmp")
        libs.insert(0, "-fopenmp")
    if use_mvec:
        cflags.append("-DOK_HAVE_LIBMVEC=1")
        libs.insert(0, "-lmvec")
    exe = Path(out_dir) / ("primitives" + ("-native" if native else "") + tag)
    cmd = [cc, *cflags, "-I", str(INCLUDE), str(SRC), "-o", str(exe), *libs]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        sys.exit(f"error: compiling {SRC.name} failed; missing: {diagnose(r.stderr, cmd)}")
    if not use_mvec:
        print("warning: setup.py's libmvec probe failed: cos/sin/exp are timed as scalar libm, as the "
              "package would run them", file=sys.stderr)
    info = {"cc": cc, "command": " ".join(map(shlex.quote, cmd)), "openmp": use_omp, "libmvec": use_mvec,
            "native": native, "extra": list(extra), "cc_version": subprocess.run([cc, "--version"], capture_output=True,
                                                          text=True).stdout.splitlines()[0]}
    return exe, info


def run_c(exe, args):
    """Run the benchmark binary; its stdout is one JSON document."""
    r = subprocess.run([str(exe), *args], capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        sys.exit(f"error: {exe} exited with status {r.returncode}")
    return json.loads(r.stdout)


# ---- machine ----------------------------------------------------------------------------

def cpu_info():
    """harness.machine() plus the CPU flags of the dispatch levels and the nominal frequency."""
    info = h.machine()
    fields = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().split("\n\n")[0].splitlines():
            k, _, v = line.partition(":")
            fields[k.strip()] = v.strip()
    except OSError:
        pass
    flags = set(fields.get("flags", "").split())
    info["flags"] = {f: f in flags for f in ("avx2", "fma", "avx512f", "avx512dq", "avx512vl")}
    info["cpu_mhz"] = float(fields["cpu MHz"]) if "cpu MHz" in fields else None   # under KVM: the TSC rate
    mx = Path("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
    info["max_mhz"] = int(mx.read_text()) / 1000.0 if mx.exists() else None
    return info


def cpu_times():
    """(busy, steal, total) jiffies of all CPUs from /proc/stat, or None."""
    try:
        f = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    except (OSError, ValueError, IndexError):
        return None
    steal = f[7] if len(f) > 7 else 0
    idle = f[3] + (f[4] if len(f) > 4 else 0)
    total = sum(f[:8])
    return total - idle - steal, steal, total


# ---- report -----------------------------------------------------------------------------

def fmt_ns(x):
    """Three significant digits (whole numbers from 1000 up)."""
    return f"{x:.3g}" if x < 1000 else f"{x:.0f}"


def fmt_rate(r):
    v = r.get("rate")
    return (f"{v:.3g}" if v < 100 else f"{v:.0f}") + f" {r['rate_unit']}" if v else ""


def table(rows):
    """Markdown table of all results."""
    lines = ["| primitive | unit | level | n | ns per unit (median) | min | GFLOP/s or GB/s | spread |",
             "|---|---|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        lvl = r["level"] + {"native": " [native]", "no-wrapv": " [-fno-wrapv]"}.get(r.get("build"), "")
        prim = r["primitive"]
        mn = fmt_ns(r["ns_per_unit_min"]) if "ns_per_unit_min" in r else ""
        lines.append(f"| {prim} | {r['unit']} | {lvl} | {r['n']} | {fmt_ns(r['ns_per_unit'])} | {mn} | "
                     f"{fmt_rate(r)} | {100 * r['spread']:.0f}% |")
    return "\n".join(lines)


def main(argv=None):
    ap = h.parser(__doc__, repeats=None, data=False)
    ap.add_argument("--native", action="store_true", help="also build with -march=native and compare")
    ap.add_argument("--md", metavar="OUT", help="also write the Markdown table to a file")
    ap.add_argument("--target-ms", type=float, default=50.0, help="length of one timed repetition (default 50)")
    ap.add_argument("--reps", type=int, default=7, help="repetitions per figure, median reported (default 7)")
    ap.add_argument("--skip-dram", action="store_true", help="skip the 256 MB working set")
    ap.add_argument("--skip-wrapv-check", action="store_true",
                    help="skip timing ok_dot/ok_sqdist built with -fno-wrapv (the vectorised code)")
    ap.add_argument("--build-dir", help="where to put the binaries (default: a temporary directory)")
    args = ap.parse_args(argv)
    if args.reps < 7 or args.target_ms < 20:
        print(f"note: --reps {args.reps} --target-ms {args.target_ms:g} is below the 7 x ~50 ms the "
              "figures are specified with: a smoke run", file=sys.stderr)

    t_start = time.time()
    machine = cpu_info()
    stat0 = cpu_times()
    tmp = None
    if args.build_dir:
        out_dir = Path(args.build_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="ok-prim-")
        out_dir = Path(tmp.name)
    try:
        exe, binfo = build(out_dir, native=False)
        common = ["--target-ms", str(args.target_ms), "--reps", str(args.reps)]
        port = run_c(exe, common + (["--skip-dram"] if args.skip_dram else []))
        rows = port["results"]
        for r in rows:
            r["build"] = "portable"
        builds = [binfo]
        max_level = port["meta"]["max_level"]
        if args.native:
            nexe, ninfo = build(out_dir, native=True, tag="")
            builds.append(ninfo)
            # only the level the dispatch picks (the learners' code); the roof is intrinsics
            # (same code), DRAM does not depend on the compiler and the composites are sums of
            # the parts: skipped, to stay within the time budget of a shared machine.
            nat = run_c(nexe, common + ["--skip-dram", "--no-composites", "--levels", str(max_level),
                                        "--only", "vec,math,mem,krow"])
            for r in nat["results"]:
                r["build"] = "native"
            rows += nat["results"]
        if not args.skip_wrapv_check:
            # Python's CFLAGS carry -fwrapv into every extension; with it gcc 12 cannot count the
            # trips of OK_DOT_BODY's `for (; i + 16 <= n; i += 16)` and leaves ok_dot/ok_sqdist
            # scalar at every level.  -fno-wrapv shows what they cost vectorised (same bits).
            wexe, winfo = build(out_dir, extra=["-fno-wrapv"], tag="-nowrapv")
            builds.append(winfo)
            wr = run_c(wexe, common + ["--levels", str(max_level), "--only", "dot,sqdist"])
            for r in wr["results"]:
                r["build"] = "no-wrapv"
            rows += wr["results"]
    finally:
        if tmp is not None:
            tmp.cleanup()

    stat1 = cpu_times()
    busy = steal = None
    if stat0 and stat1 and stat1[2] > stat0[2]:
        # whole-machine busy and hypervisor-steal share during the run (our own thread included)
        busy = (stat1[0] - stat0[0]) / (stat1[2] - stat0[2])
        steal = (stat1[1] - stat0[1]) / (stat1[2] - stat0[2])
    clock = next((r for r in rows if r["primitive"].startswith("core clock")), None)
    walls = sorted(r["wall_over_cpu"] for r in rows)
    head = [
        f"CPU: {machine['cpu']}, {machine['cores']} logical CPUs, SIMD {machine['simd']}; flags: "
        + ", ".join(f"{k}={'yes' if v else 'no'}" for k, v in machine["flags"].items()),
        f"nominal frequency: {machine['cpu_mhz']} MHz (/proc/cpuinfo 'cpu MHz')"
        + (f", cpufreq max {machine['max_mhz']} MHz" if machine["max_mhz"] else "")
        + (f"; measured effective clock {clock['rate']:.2f} GHz" if clock else ""),
        f"build: {binfo['cc_version']}; OpenMP={binfo['openmp']}, libmvec={binfo['libmvec']}, "
        f"dispatch levels timed: 0..{max_level}; vector math: {bool(port['meta']['vector_math'])}",
        f"compile: {binfo['command']}",
        f"timing: median of {args.reps} x ~{args.target_ms:g} ms, thread CPU time, one thread; "
        f"load average at start {machine['loadavg']}; wall/CPU median "
        f"{walls[len(walls) // 2]:.2f}, max {walls[-1]:.2f}"
        + (f"; all CPUs {100 * busy:.0f}% busy, {100 * steal:.1f}% stolen during the run" if busy is not None else ""),
    ]
    top = {0: "base", 1: "avx2", 2: "avx512"}[max_level]
    shipped = {r["n"]: r["ns_per_unit"] for r in rows
               if r["primitive"] == "ok_dot" and r["level"] == top and r["build"] == "portable"}
    fixed = {r["n"]: r["ns_per_unit"] for r in rows if r["primitive"] == "ok_dot" and r["build"] == "no-wrapv"}
    if 1000 in shipped and 1000 in fixed:
        head.append(f"ok_dot at n=1000, {top}: {shipped[1000]:.3f} ns/element as setup.py builds it (-fwrapv from "
                    f"Python's CFLAGS), {fixed[1000]:.3f} with -fno-wrapv ({shipped[1000] / fixed[1000]:.1f}x): "
                    "the [-fno-wrapv] rows are the vectorised code, same bits")
    text = "\n".join("- " + h for h in head) + "\n\n" + table(rows)
    print(text)
    elapsed = time.time() - t_start
    print(f"\n(total {elapsed:.0f} s)")
    if args.md:
        atomic_write(args.md, text + "\n")
    if args.json:
        h.write_json(args.json, {"machine": machine, "builds": builds, "meta": port["meta"], "args": vars(args),
                                 "elapsed_s": elapsed, "machine_busy": busy, "steal": steal, "results": rows})
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
