"""Compile mlsql's JVM expression and aggregates for Spark (``spark/*.java``) into a jar.

The package's build hook calls :func:`build`; it also runs on its own::

    python native/build_spark.py OUTDIR

It needs a JDK (``javac``, from ``$JAVA_HOME/bin`` or the ``PATH``; Java 17, the
oldest Spark 4 runs on) and PySpark's jars to compile against (the build
environment holds the ``spark`` extra). :mod:`mlsql.spark.jvm` adds the jar to a
Spark session where it builds a row's label-set statistics; where the jar is
missing, Spark SQL's array functions give the same numbers.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "spark"
#: the file name inside the package's native folder (``mlsql/_native/``)
JAR_NAME = "mlsql_spark.jar"
#: the Java release the classes are compiled for (Spark 4's oldest)
RELEASE = "17"


def javac() -> str:
    """The JDK's compiler: ``$JAVA_HOME/bin/javac``, else ``javac`` on the ``PATH``.

    Raises
    ------
    FileNotFoundError
        Where there is neither.
    """
    home = os.environ.get("JAVA_HOME")
    if home:
        found = shutil.which("javac", path=str(Path(home) / "bin"))
        if found:
            return found
    found = shutil.which("javac")
    if found is None:
        raise FileNotFoundError("no JDK: javac is not in $JAVA_HOME/bin or on the PATH")
    return found


def spark_jars() -> Path:
    """The folder of PySpark's jars, which the classes compile against.

    Raises
    ------
    FileNotFoundError
        Where PySpark is not installed or has no jars.
    """
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        raise FileNotFoundError("PySpark is not installed (the spark extra)")
    jars = Path(spec.origin).parent / "jars"
    if not any(jars.glob("spark-sql-api_*.jar")):
        raise FileNotFoundError(f"no Spark SQL jar in {jars}")
    return jars


def build(out_dir: Path, cc: str | None = None) -> Path:
    """Compile the classes and pack them into ``out_dir``; return the jar's path.

    Parameters
    ----------
    out_dir : pathlib.Path
        Where the jar goes (created if missing).
    cc : str, optional
        Unused: the hook passes its C compiler to every builder.

    Raises
    ------
    FileNotFoundError
        Without a JDK or PySpark's jars.
    subprocess.CalledProcessError
        If ``javac`` fails (its output is in the exception).
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    sources = sorted(str(p) for p in SOURCES.glob("*.java"))
    with tempfile.TemporaryDirectory() as tmp:
        classes = Path(tmp)
        command = [javac(), "--release", RELEASE, "-nowarn", "-cp", f"{spark_jars()}/*"]
        command += ["-d", str(classes), *sources]
        subprocess.run(command, check=True, capture_output=True, text=True)
        out = out_dir / JAR_NAME
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as jar:
            jar.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\n\r\n")
            for path in sorted(classes.rglob("*.class")):
                jar.write(path, path.relative_to(classes).as_posix())
    return out


def main(argv: Sequence[str]) -> int:
    """``build_spark.py OUTDIR``: build, print the jar's path."""
    if len(argv) != 1:
        print("usage: python native/build_spark.py OUTDIR", file=sys.stderr)
        return 2
    try:
        print(build(Path(argv[0])))
    except (subprocess.CalledProcessError, FileNotFoundError) as error:
        print(getattr(error, "stderr", None) or error, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
