"""Training and evaluation: CRF training and bundles, cross-validation, ablations, the synthetic
corpus generator and the scorers. Uses the engine; never the application layer."""
