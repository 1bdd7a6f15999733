"""Build the compiled parts of thousand: every ``ext/*.pyx`` becomes ``thousand.kernel.<name>``
(the kernel layer of the package ``thousand``, whose source is the folder ``solver/thousand/``),
beside its pure-Python twin.

Metadata lives in pyproject.toml; this file only declares the extensions and
how they are compiled: Cython (language level 3), ``-O3``, numpy's headers,
and OpenMP when a small test program with ``-fopenmp`` compiles and links on
this machine (otherwise a plain build, silently). ``THOUSAND_NO_OPENMP=1``
forces the plain build.

A compiled module is cached by the hash of everything that goes into it (its
sources and headers, the flags, the Python, Cython, numpy and compiler versions)
under ``$THOUSAND_BUILD_CACHE`` or ``~/.cache/thousand/build``, so that a second
``pip install`` (an extra, the test install after the user install) copies it
instead of compiling it again. ``THOUSAND_BUILD_CACHE=off`` disables the cache.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import platform
import shutil
import sys
import tempfile
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent

_OMP_TEST = r"""
#include <omp.h>
int main(void) {
    int n = 0;
    #pragma omp parallel for reduction(+:n)
    for (int i = 0; i < 4; i++) n += 1;
    return (n == 4 && omp_get_max_threads() > 0) ? 0 : 1;
}
"""


@contextlib.contextmanager
def _quiet():
    """Silence the compiler at the file-descriptor level (it writes past sys.stdout)."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        os.close(saved[0])
        os.close(saved[1])


def _openmp_flags(compiler) -> tuple[list[str], list[str]]:
    """(compile, link) flags for OpenMP, or empty lists if a test build fails."""
    if os.environ.get("THOUSAND_NO_OPENMP", "") not in ("", "0"):
        return [], []
    if compiler.compiler_type == "msvc":
        flags = (["/openmp"], [])
    else:
        flags = (["-fopenmp"], ["-fopenmp"])
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "omp_test.c")
        with open(src, "w") as fh:
            fh.write(_OMP_TEST)
        try:
            with _quiet():
                objs = compiler.compile([src], output_dir=tmp, extra_postargs=flags[0])
                compiler.link_executable(objs, "omp_test", output_dir=tmp, extra_postargs=flags[1])
        except Exception:  # CompileError, LinkError, a missing compiler...
            return [], []
    return flags


def _cache_dir() -> Path | None:
    where = os.environ.get("THOUSAND_BUILD_CACHE", "")
    if where.lower() in ("off", "0", "no"):
        return None
    if where:
        return Path(where)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "thousand" / "build"


def _build_key(ext, flags: list[str], compiler) -> str:
    """The hash of every input of one compiled module: equal keys give equal modules."""
    import Cython
    import numpy

    digest = hashlib.sha256()
    for part in (
        ext.name,
        sys.version,
        platform.machine(),
        Cython.__version__,
        numpy.__version__,
        " ".join(getattr(compiler, "compiler_so", None) or [compiler.compiler_type]),
        " ".join(flags),
        " ".join(map(str, ext.define_macros)),
    ):
        digest.update(part.encode() + b"\0")
    for src in [*ext.sources, *ext.depends]:
        digest.update(src.encode() + b"\0" + (HERE / src).read_bytes() + b"\0")
    return digest.hexdigest()[:32]


class BuildExt(build_ext):
    """Cythonize the ``.pyx`` sources, then compile with the flags this machine supports.

    Cythonizing happens here, at build time, so that an sdist ships the ``.pyx``
    sources (not the generated C) and the extension objects setuptools prepared
    keep their identity. A module whose inputs were built before is copied from the
    build cache instead (see the module docstring).
    """

    def build_extensions(self):
        omp_compile, omp_link = _openmp_flags(self.compiler)
        opt = ["/O2"] if self.compiler.compiler_type == "msvc" else ["-O3"]
        self._flags = (opt + omp_compile, omp_link)
        self._cache = _cache_dir()
        super().build_extensions()

    def build_extension(self, ext):
        import numpy
        from Cython.Build import cythonize

        compile_flags, link_flags = self._flags
        key = _build_key(ext, [*compile_flags, "|", *link_flags], self.compiler)
        cached = self._cache / f"{ext.name}-{key}.so" if self._cache else None
        target = Path(self.get_ext_fullpath(ext.name))
        if cached is not None and cached.is_file() and not self.force:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(cached, target)
            print(f"thousand: {ext.name} copied from the build cache ({cached})")
            return
        if any(src.endswith(".pyx") for src in ext.sources):
            (done,) = cythonize(
                [ext], compiler_directives={"language_level": 3}, include_path=["ext"], quiet=True, force=self.force
            )
            ext.sources = list(done.sources)
        if numpy.get_include() not in ext.include_dirs:
            ext.include_dirs.append(numpy.get_include())
        ext.extra_compile_args = [*ext.extra_compile_args, *compile_flags]
        ext.extra_link_args = [*ext.extra_link_args, *link_flags]
        super().build_extension(ext)
        if cached is not None:
            _store(target, cached)


def _store(built: Path, cached: Path) -> None:
    """Copy a fresh module into the cache atomically; a cache that cannot be written is skipped."""
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(f".{os.getpid()}.tmp")
        shutil.copyfile(built, tmp)
        os.replace(tmp, cached)
    except OSError:
        pass


def _extensions() -> list[Extension]:
    exts = []
    for pyx in sorted((HERE / "ext").glob("*.pyx")):
        exts.append(
            Extension(
                f"thousand.kernel.{pyx.stem}",
                sources=[pyx.relative_to(HERE).as_posix()],
                # the C helpers (ext/*.h), the declarations both modules share (ext/thk.pxd) and the
                # kernel's algorithms, one file each (ext/kernel_*.pxi, included by _kernel.pyx)
                include_dirs=["ext"],
                depends=sorted(
                    p.relative_to(HERE).as_posix()
                    for pattern in ("*.pxd", "*.pxi", "*.h")
                    for p in (HERE / "ext").glob(pattern)
                ),
                define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
            )
        )
    return exts


setup(ext_modules=_extensions(), cmdclass={"build_ext": BuildExt})
