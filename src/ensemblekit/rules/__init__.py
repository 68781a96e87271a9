"""Rule ensembles (Akdemir & Jannink 2014): ISLE trees, their rules, post-processing, ISCA."""
