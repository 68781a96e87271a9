from types import SimpleNamespace

from ensemblekit.report import marks_legend


def test_legend_names_the_reference_and_the_test_of_marked_cells():
    an = SimpleNamespace(marks={("iris", "c45"): "▼", ("wine", "c45"): ""}, alpha=0.05)
    line = marks_legend(an, "knn", "cv")
    assert line.startswith("▲/▼: significantly better/worse than knn on that data set")
    assert "corrected resampled t-test over folds (Nadeau & Bengio), alpha 0.05" in line


def test_legend_says_so_when_no_cell_differs():
    an = SimpleNamespace(marks={("iris", "iekm"): "", ("wine", "iekm"): ""}, alpha=0.01)
    assert marks_legend(an, "kmeans", "runs") == (
        "per data set, no algorithm differs significantly from kmeans "
        "(Wilcoxon signed-rank test over runs, alpha 0.01)")


def test_no_legend_without_a_reference():
    an = SimpleNamespace(marks={("iris", "knn"): ""}, alpha=0.05)
    assert marks_legend(an, None, "cv") is None
