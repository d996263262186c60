"""Small file operations on the paths Spark writes: the manifest, the old manifest, staging leftovers.

Classic Spark: the Hadoop FileSystem API through the JVM, for any Hadoop URI (local paths are
handled in plain Python by deid_core/app/run.py). Spark Connect: every path belongs to the
server, and the client has no JVM. The manifest is uploaded with `spark.copyFromLocalToFs`,
which writes one file at an exact path on the server's default file system; Connect offers no
delete or list, so nothing is removed (the run stages in the cache there, and the previous
manifest stays until the new one replaces it).
"""

from __future__ import annotations

import logging
import os
import tempfile
from typing import Any

from deid_core.config import ConfigError
from deid_spark.udfs.session import is_connect

log = logging.getLogger("deid.job")
ALLOW_LOCAL_CONF = "spark.sql.artifact.copyFromLocalToFs.allowDestLocal"


def has_scheme(path: str) -> bool:
    """A URI with a scheme (hdfs://, s3a://, file:...), not a plain path."""
    return "://" in path or path.startswith("file:")


class ServerFiles:
    """File operations on the file systems the Spark session writes to."""

    def __init__(self, spark: Any) -> None:
        self.spark = spark
        self.connect = is_connect(spark)

    def check_output(self, path: str, where: str) -> None:
        """Under Spark Connect, refuse before any work an output folder the manifest cannot be written to."""
        if not self.connect:
            return
        if has_scheme(path):
            raise ConfigError(f"{where}: under Spark Connect the manifest is written with copyFromLocalToFs, "
                              "which takes a path without a scheme (resolved on the server's default file "
                              "system); give the path without its scheme, or use --output-table-prefix")
        allowed = str(self.spark.conf.get(ALLOW_LOCAL_CONF, "false")).lower() == "true"
        default_fs = str(self.spark.conf.get("spark.hadoop.fs.defaultFS", "file:///"))
        if not allowed and default_fs.startswith("file:"):
            raise ConfigError(f"{where}: this Spark Connect server writes to its local file system and refuses "
                              f"uploads there; start it with --conf {ALLOW_LOCAL_CONF}=true, or write to a "
                              "distributed file system (spark.hadoop.fs.defaultFS), or use --output-table-prefix")

    def write_text(self, path: str, text: str) -> None:
        """Write a small text file (replacing it)."""
        if self.connect:
            fd, tmp = tempfile.mkstemp(prefix="deid-manifest-", suffix=".json")
            try:
                with os.fdopen(fd, "w") as fh:
                    fh.write(text)
                self.spark.copyFromLocalToFs(tmp, path)
            finally:
                os.unlink(tmp)
            return
        fs, hpath = self._hadoop(path)
        out = fs.create(hpath, True)
        out.write(bytearray(text.encode("utf-8")))
        out.close()

    def remove(self, path: str) -> None:
        """Delete a file or folder (missing is fine); under Spark Connect there is no way to: left in place."""
        if self.connect:
            log.debug("Spark Connect cannot delete files: %s left in place", path.rsplit("/", 1)[-1])
            return
        fs, hpath = self._hadoop(path)
        fs.delete(hpath, True)

    def list(self, folder: str) -> list[str]:
        """The children of a folder ([] if it does not exist, and under Spark Connect, which cannot list)."""
        if self.connect:
            return []
        fs, hpath = self._hadoop(folder)
        if not fs.exists(hpath):
            return []
        return [str(s.getPath().toString()) for s in fs.listStatus(hpath)]

    def _hadoop(self, path: str) -> tuple[Any, Any]:
        """The Hadoop FileSystem of a path and the path object (classic Spark: through the JVM)."""
        sc = self.spark.sparkContext
        hpath = sc._jvm.org.apache.hadoop.fs.Path(path)
        return hpath.getFileSystem(sc._jsc.hadoopConfiguration()), hpath
