"""Small file operations on the paths Spark writes: manifests, staging leftovers, runs' partitions.

The executor's half of deid_core/app/store.py's `Files` (local paths are handled there in plain
Python). Classic Spark: the Hadoop FileSystem API through the JVM, for any Hadoop URI. Spark
Connect: every path belongs to the server, and the client has no JVM. Reads are Spark reads
(both); the manifest is uploaded with `spark.copyFromLocalToFs`, which writes one file at an
exact path on the server's default file system; Connect offers no delete or list, so nothing
is removed (the run stages in the cache there, the previous manifest stays until the new one
replaces it, and scheduled runs into folders are refused: FolderStore.check).
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

    def remote_files_available(self) -> bool:
        """Whether files can be listed and removed (classic Spark; Spark Connect cannot)."""
        return not self.connect

    def write_remote_text(self, path: str, text: str) -> None:
        """Write a small text file, replacing it: a hidden temporary file renamed into place (atomic on
        HDFS); under Spark Connect uploaded with copyFromLocalToFs."""
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
        tmp_path = hpath.getParent().suffix(f"/.{hpath.getName()}.tmp")
        out = fs.create(tmp_path, True)
        out.write(bytearray(text.encode("utf-8")))
        out.close()
        if fs.exists(hpath):
            fs.delete(hpath, False)
        if not fs.rename(tmp_path, hpath):
            raise OSError(f"{path}: could not rename the written file into place")

    def read_remote_text(self, path: str) -> str | None:
        """A small text file's content (None if missing); a Spark read, so Spark Connect too."""
        texts = self._read_texts(path)
        return texts[0][1] if texts else None

    def read_remote_texts(self, folder: str, suffix: str) -> list[tuple[str, str]]:
        """(name, text) of the files *suffix in a folder, read by one Spark job (Spark Connect too)."""
        return self._read_texts(f"{folder.rstrip('/')}/*{suffix}")

    def remove_remote(self, path: str) -> None:
        """Delete a file or folder (missing is fine); under Spark Connect there is no way to: left in place."""
        if self.connect:
            log.debug("Spark Connect cannot delete files: %s left in place", path.rsplit("/", 1)[-1])
            return
        fs, hpath = self._hadoop(path)
        fs.delete(hpath, True)

    def list_remote(self, folder: str) -> list[str]:
        """The children of a folder ([] if it does not exist, and under Spark Connect, which cannot list)."""
        if self.connect:
            return []
        fs, hpath = self._hadoop(folder)
        if not fs.exists(hpath):
            return []
        return [str(s.getPath().toString()) for s in fs.listStatus(hpath)]

    def _read_texts(self, pattern: str) -> list[tuple[str, str]]:
        from pyspark.errors import AnalysisException
        from pyspark.sql import functions as F

        try:
            rows = (self.spark.read.text(pattern, wholetext=True)
                    .select("value", F.col("_metadata.file_name")).collect())
        except AnalysisException as exc:
            if "PATH_NOT_FOUND" in str(exc):
                return []
            raise
        return [(r["file_name"], r["value"]) for r in rows]

    def _hadoop(self, path: str) -> tuple[Any, Any]:
        """The Hadoop FileSystem of a path and the path object (classic Spark: through the JVM)."""
        sc = self.spark.sparkContext
        hpath = sc._jvm.org.apache.hadoop.fs.Path(path)
        return hpath.getFileSystem(sc._jsc.hadoopConfiguration()), hpath
