"""Corpus readers and writers (PhysioNet deid, i2b2 2014 XML, BRAT, project Parquet)."""
