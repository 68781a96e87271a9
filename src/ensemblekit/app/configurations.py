"""Named configurations: one algorithm under its own settings, as one column of ``compare``.

``compare c45 c45:unpruned=true knn knn:n_neighbors=3`` compares four columns. A
configuration is written ``ALGO:key=value+key=value``: the registry name, a colon, and
settings joined by ``+``. The syntax needs no quoting in a POSIX shell, and the label
holds no comma, so it survives a CSV cell as it is. Its label is the canonical
algorithm name followed by the settings as written (``j48:unpruned=true`` is labelled
``c45:unpruned=true``); a plain name is its own label, so its column, journal records
and output rows are those of a comparison without configurations. Settings are
checked against the algorithm's declared parameters, as ``--set`` values are, and take
precedence over ``--set`` (which still applies to every algorithm that has the key).

A setting ``tune.KEY=RANGE`` tunes that parameter inside every training fold instead of
fixing it (``knn:tune.n_neighbors=1:9:2``; RANGE as ``--tune`` takes it, ``start:stop:step``
or ``v1,v2``): what ``--tune`` does for every algorithm, for this configuration alone.

This is Weka Experimenter's practice of listing one scheme several times with different
options, and scikit-learn's of comparing several parameterisations of one estimator.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ensemblekit import registry
from ensemblekit.errors import UsageError

#: Separates the algorithm from its settings.
NAME_SEPARATOR = ":"
#: Separates two settings.
SETTING_SEPARATOR = "+"
#: Starts the key of a setting that is tuned, not fixed (``tune.n_neighbors=1:9:2``).
TUNE_PREFIX = "tune."


@dataclass(frozen=True)
class Configuration:
    """An algorithm with settings of its own, as the user named it.

    Attributes
    ----------
    algorithm : str
        The canonical registry name.
    settings : dict
        ``{key: value text}`` in the order written; empty for a plain name.
    label : str
        The column's name: ``algorithm`` alone, or ``algorithm:settings as written``.
    tune : dict
        ``{key: range text}`` of the ``tune.KEY=RANGE`` settings, in the order written.
    """

    algorithm: str
    settings: dict = field(default_factory=dict)
    label: str = ""
    tune: dict = field(default_factory=dict)


def parse_configuration(text: str) -> Configuration:
    """Read ``ALGO`` or ``ALGO:key=value+key=value``.

    Parameters
    ----------
    text : str
        As given on the command line or to :func:`ensemblekit.api.compare`.

    Returns
    -------
    Configuration

    Raises
    ------
    ensemblekit.registry.UnknownAlgorithmError
        The algorithm is not registered.
    UsageError
        Nothing after the colon, a setting without ``=`` or without a key or value,
        or a key given twice (fixed or tuned); the message quotes ``text``.
    """
    name, colon, rest = text.partition(NAME_SEPARATOR)
    algorithm = registry.get(name).name
    if not colon:
        return Configuration(algorithm, {}, algorithm)
    if not rest:
        raise UsageError(f"{text!r}: no settings after ':' (write ALGO:key=value+key=value)")
    settings: dict[str, str] = {}
    tune: dict[str, str] = {}
    for item in rest.split(SETTING_SEPARATOR):
        key, equals, value = item.partition("=")
        tuned = key.startswith(TUNE_PREFIX)
        if tuned:
            key = key[len(TUNE_PREFIX):]
        if not equals or not key or not value:
            raise UsageError(f"{text!r}: {item!r} is not key=value (settings are joined by "
                             f"'{SETTING_SEPARATOR}': ALGO:key=value+key=value)")
        if key in settings or key in tune:
            raise UsageError(f"{text!r}: {key} is set twice")
        (tune if tuned else settings)[key] = value
    return Configuration(algorithm, settings, f"{algorithm}{NAME_SEPARATOR}{rest}", tune)


def parse_configurations(texts: Sequence[str]) -> list[Configuration]:
    """:func:`parse_configuration` of each, refusing a label named twice.

    Raises
    ------
    UsageError
        Two texts give the same label (``knn knn``, or ``j48`` beside ``c45``).
    """
    configurations: list[Configuration] = []
    given: dict[str, str] = {}  # label -> the text that gave it
    for text in texts:
        configuration = parse_configuration(text)
        first = given.get(configuration.label)
        if first is not None:
            same = "" if first == text else f" ({first} and {text} are the same algorithm)"
            raise UsageError(f"an algorithm is named twice{same}")
        given[configuration.label] = text
        configurations.append(configuration)
    return configurations
