"""The engine: the Deidentifier (pipeline), its stages (rules, CRF), merge and surrogates.

Depends only on the primitives of deid_core (spans, notes, doc, text, taxonomy, config, keys,
bundle, gazetteers); never on deid_core.app or deid_core.training, never on Spark.
"""
