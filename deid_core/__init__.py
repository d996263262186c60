"""deid_core: the Spark-free de-identification engine (taxonomy, tagging, replacement, evaluation)."""

__version__ = "0.1.0"
