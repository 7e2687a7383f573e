"""Build script for onlinekern's Cython extensions.

Every ``.pyx`` file under ``onlinekern/`` becomes one extension module.  The build

* compiles with ``-O3`` and, when a compile-and-link probe succeeds, with OpenMP
  (``-fopenmp``); without it every ``prange`` runs serially and results are the same;
* links glibc's vector math library (libmvec) when a probe finds it, so the random-feature
  learners get vectorised sin/cos/exp chosen at run time for the CPU (``include/ok_vmath.h``);
* never uses ``-march=native`` unless ``ONLINEKERN_NATIVE=1`` is set;
* turns Cython's bounds/wraparound checks back on with ``ONLINEKERN_DEBUG=1``;
* builds only the listed ``.pyx`` files with ``ONLINEKERN_ONLY=onlinekern/a.pyx,onlinekern/b.pyx``.

The build runs in parallel on every core: Cython translates the modules in ``os.cpu_count()``
processes and ``build_ext`` compiles them in as many threads (largest first, so no long module is
left alone at the end) unless ``-j`` / ``--parallel`` says otherwise.  Cython runs only when
``build_ext`` runs, not when pip merely asks for the metadata, and C code is built without
debug information (``-g0``) unless ``ONLINEKERN_DEBUG=1``.
"""
import os
import shutil
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
DEBUG = os.environ.get("ONLINEKERN_DEBUG", "0") == "1"
NATIVE = os.environ.get("ONLINEKERN_NATIVE", "0") == "1"
NO_OPENMP = os.environ.get("ONLINEKERN_NO_OPENMP", "0") == "1"
CORES = os.cpu_count() or 1

OPENMP_PROBE = textwrap.dedent(
    """
    #include <omp.h>
    #include <stdio.h>
    int main(void) {
        int n = 0;
        #pragma omp parallel reduction(+:n)
        n += 1;
        printf("%d", n > 0 && omp_get_max_threads() > 0);
        return 0;
    }
    """
)

LIBMVEC_PROBE = textwrap.dedent(
    """
    #include <immintrin.h>
    __m256d _ZGVdN4v_cos(__m256d);
    __attribute__((target("avx2"))) static double f(double x) {
        double out[4];
        _mm256_storeu_pd(out, _ZGVdN4v_cos(_mm256_set1_pd(x)));
        return out[0];
    }
    int main(void) {
        if (!__builtin_cpu_supports("avx2")) return 0;
        return f(0.0) == 1.0 ? 0 : 1;
    }
    """
)


def _probe(compiler, source, compile_args, link_args, libraries=()):
    """Compile, link and run a tiny C program; True if all three succeed."""
    tmp = tempfile.mkdtemp(prefix="onlinekern-probe-")
    cwd = os.getcwd()
    try:
        os.chdir(tmp)
        Path("probe.c").write_text(source)
        objs = compiler.compile(["probe.c"], extra_postargs=compile_args)
        compiler.link_executable(objs, "probe", extra_postargs=link_args, libraries=list(libraries))
        return os.system(os.path.join(tmp, "probe") + " > /dev/null 2>&1") == 0
    except Exception:  # noqa: BLE001 - any failure means "not available"
        return False
    finally:
        os.chdir(cwd)
        shutil.rmtree(tmp, ignore_errors=True)


class BuildExt(build_ext):
    """build_ext that runs Cython in parallel, compiles in parallel and probes OpenMP and libmvec.

    The probes run once per build, with the real compiler; their answer applies to every module.
    """

    def finalize_options(self):
        super().finalize_options()
        if self.parallel is None:        # no -j given: one compiler per core
            self.parallel = CORES

    def run(self):
        # Cython here, when extensions are built, not when pip only asks for the metadata; all
        # modules at once in CORES processes.  The extensions keep their setuptools attributes:
        # only their sources change from .pyx to the generated .c.
        done = {ext.name: ext for ext in cythonize(self.extensions, compiler_directives=DIRECTIVES,
                                                   include_path=["onlinekern"], nthreads=_cython_threads())}
        for ext in self.extensions:
            ext.sources = done[ext.name].sources
        self.extensions.sort(key=_c_size, reverse=True)
        super().run()

    def build_extensions(self):
        cc = self.compiler
        use_omp = not NO_OPENMP and _probe(cc, OPENMP_PROBE, ["-fopenmp"], ["-fopenmp"])
        use_mvec = sys.platform.startswith("linux") and _probe(cc, LIBMVEC_PROBE, [], [], ["mvec"])
        print(f"onlinekern build: OpenMP={'on' if use_omp else 'off (serial fallback)'}, "
              f"libmvec={'on' if use_mvec else 'off (scalar libm)'}, "
              f"march={'native' if NATIVE else 'portable'}, debug={DEBUG}, jobs={self.parallel}")
        for ext in self.extensions:
            if use_omp:
                ext.extra_compile_args.append("-fopenmp")
                ext.extra_link_args.append("-fopenmp")
            if use_mvec:
                ext.define_macros.append(("OK_HAVE_LIBMVEC", "1"))
                ext.libraries.append("mvec")
        super().build_extensions()


def _cython_threads():
    """Cython's worker processes: one per core (0, in-process, on Windows)."""
    return 0 if sys.platform == "win32" else CORES


def _c_size(ext):
    """Size of an extension's generated C source: the compile time, roughly."""
    return sum(os.path.getsize(src) for src in ext.sources if os.path.exists(src))


DIRECTIVES = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "cdivision": True,
    "binding": True,
    "embedsignature": True,
}


def extensions():
    compile_args = ["-O0", "-g"] if DEBUG else ["-O3", "-g0"]
    compile_args += ["-fno-math-errno", "-ffp-contract=off", "-Wno-unused-function", "-Wno-unreachable-code"]
    if NATIVE:
        compile_args.append("-march=native")
    exts = []
    only = os.environ.get("ONLINEKERN_ONLY")  # developer convenience: build one module
    for pyx in sorted(HERE.glob("onlinekern/**/*.pyx")):
        if only and str(pyx.relative_to(HERE)) not in only.split(","):
            continue
        rel = pyx.relative_to(HERE)
        name = ".".join(rel.with_suffix("").parts)
        exts.append(
            Extension(
                name,
                [str(rel)],
                include_dirs=[np.get_include(), "include"],
                define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_9_API_VERSION")],
                extra_compile_args=list(compile_args),
                extra_link_args=[],
                libraries=["m"],
                # every header: a changed kernel rebuilds the modules (build_ext compares times)
                depends=sorted(str(h.relative_to(HERE)) for h in (HERE / "include").glob("*.h")),
            )
        )
    return exts


if __name__ == "__main__":   # pip and ``python setup.py`` both run this; Cython's spawned workers do not
    setup(ext_modules=extensions(), cmdclass={"build_ext": BuildExt})
