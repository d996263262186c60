"""CRF features (seed 000 §3.2-3.3.3, seed 001, seed 002), registered by name, chosen by config.

Three kinds of feature family:
- token families `(token) -> list[str]` (token_families.py): intrinsic to the token string,
  computed once per token *type* and cached per process; shapes in shapes.py;
- window families (extractor.py): strings of a neighbour's cached entry, pre-prefixed with the
  offset and shared by reference (no string building per token);
- doc families `(ctx, feats)` (doc_families.py): context of the note (sentence, section, line,
  attribute, metadata, rule hits) appended to the per-token lists.
The word lists they read are data (words.py); this module is the stable import surface.
"""

from deid_core.engine.crf.doc_families import (
    DOC_FAMILIES,
    DocContext,
    doc_family,
    known_name_tokens,
)
from deid_core.engine.crf.extractor import (
    NGRAM_FAMILIES,
    SPECIAL_FAMILIES,
    WINDOW_FAMILIES,
    FeatureConfig,
    FeatureExtractor,
    TypeEntry,
    all_families,
    easyadapt,
)
from deid_core.engine.crf.shapes import regex_shape, shape, short_shape
from deid_core.engine.crf.token_families import TOKEN_FAMILIES, gazetteer_names, token_family

__all__ = [
    "DOC_FAMILIES", "NGRAM_FAMILIES", "SPECIAL_FAMILIES", "TOKEN_FAMILIES", "WINDOW_FAMILIES", "DocContext",
    "FeatureConfig", "FeatureExtractor", "TypeEntry", "all_families", "doc_family", "easyadapt",
    "gazetteer_names", "known_name_tokens", "regex_shape", "shape", "short_shape", "token_family",
]
