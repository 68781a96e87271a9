"""Lazy ensembles: ``lazy-bagging`` (Zhu & Yang 2008) and ``lazy-stacking`` (Homayouni et al.).

Both build, for every test instance, an ensemble whose bootstrap bags are
enriched with that instance's nearest training instances under a gain-ratio
weighted distance (:mod:`ensemblekit.lazy.distance`):

* :class:`~ensemblekit.lazy.lazy_bagging.LazyBaggingClassifier` -- unpruned
  trees on every bag, majority vote;
* :class:`~ensemblekit.lazy.lazy_stacking.LazyStackingClassifier` -- the
  learner type changes from bag to bag (tree, k-nearest-neighbour, naive
  Bayes), majority vote or a stacked combiner.

Classes are imported from their modules (this package imports nothing
itself, so that listing algorithms stays fast).
"""
