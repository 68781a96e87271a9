"""ensemblekit: ensemble methods inside and around learners, on ARFF and CSV files.

The package is a scikit-learn compatible library under the ``ensemblekit``
command line. Importing it is cheap: no numeric library is imported here.
"""

__version__ = "0.1.0"
