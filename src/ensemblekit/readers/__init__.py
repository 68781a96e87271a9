"""Readers of data files: text decoding, ARFF, CSV, and the table they fill."""
