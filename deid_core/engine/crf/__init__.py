"""CRF taggers: features, label schemes, word clusters, training and tagging."""
