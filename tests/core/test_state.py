"""The fitted-state declaration: what collect stores and what restore accepts, on toy classes."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ensemblekit.state import Array, ArrayList, Members, Scalar, collect, declared_state, restore
from ensemblekit.trust import DamagedModelError


class Leaf:
    _fitted_state = {"weight_": Scalar("float", low=0, high=1)}


class Toy:
    _fitted_state = {
        "n_features_in_": Scalar("int", low=1),
        "kind_": Scalar("str", choices=("a", "b")),
        "bandwidth_": Scalar("float", inf=True, optional=True),
        "feature_": Array("int64", ("n_nodes",), low=-1, below="n_features_in_"),
        "value_": Array("float64", ("n_nodes", "n_classes"), low=0, high=1, nan=True),
        "extra_": Array("float64", ("*",), optional=True),
        "tables_": ArrayList(Array("float64", ("*", "n_classes")), length="n_nodes"),
        "members_": Members(Leaf, length=2),
    }

    def __init__(self, n_classes=2):
        self.n_classes = n_classes

    def _check_state(self, ctx):
        if self.feature_[0] == -1 and len(self.feature_) > 1:
            ctx.fail("a leaf root with other nodes")


def _fitted():
    toy = Toy()
    toy.n_features_in_, toy.kind_, toy.bandwidth_ = 3, "a", float("inf")
    toy.feature_ = np.array([2, -1, -1], dtype=np.int64)
    toy.value_ = np.array([[0.5, 0.5], [1.0, 0.0], [np.nan, 0.25]])
    toy.extra_ = None
    toy.tables_ = [np.zeros((k, 2)) for k in (1, 2, 3)]
    toy.members_ = []
    for w in (0.25, 0.75):
        leaf = Leaf()
        leaf.weight_ = w
        toy.members_.append(leaf)
    return toy


def _stored(toy=None):
    scalars, arrays = collect(toy or _fitted(), "model/")
    return json.loads(json.dumps(scalars)), arrays


def test_collect_names_arrays_and_keeps_scalars_as_json():
    scalars, arrays = _stored()
    assert scalars == {"n_features_in_": 3, "kind_": "a", "bandwidth_": "inf", "extra_": None,
                       "tables_": 3, "members_": [{"weight_": 0.25}, {"weight_": 0.75}]}
    assert sorted(arrays) == ["model/feature_", "model/tables_/0", "model/tables_/1",
                              "model/tables_/2", "model/value_"]


def test_restore_rebuilds_every_entry():
    scalars, arrays = _stored()
    toy = restore(Toy, {"n_classes": 2}, scalars, arrays)
    assert type(toy) is Toy and toy.n_classes == 2 and toy.bandwidth_ == float("inf")
    assert toy.feature_.tolist() == [2, -1, -1] and toy.extra_ is None
    assert [t.shape for t in toy.tables_] == [(1, 2), (2, 2), (3, 2)]
    assert [type(m) for m in toy.members_] == [Leaf, Leaf]
    assert [m.weight_ for m in toy.members_] == [0.25, 0.75]
    assert not toy.value_.flags.writeable


def _refused(change, match, params=None):
    scalars, arrays = _stored()
    change(scalars, arrays)
    with pytest.raises(DamagedModelError, match=match):
        restore(Toy, params or {"n_classes": 2}, scalars, arrays)


@pytest.mark.parametrize("change,match", [
    (lambda s, a: a.__setitem__("model/feature_", np.array([3, -1, -1])),
     r"model\.feature_: holds 3, not below 3"),
    (lambda s, a: a.__setitem__("model/feature_", np.array([2, -2, -1])),
     r"holds -2, below its least value -1"),
    (lambda s, a: a.__setitem__("model/feature_", np.array([2, -1])),
     r"model\.value_: has shape \(3, 2\): axis 0 should be 2 \(n_nodes\)"),
    (lambda s, a: a.__setitem__("model/feature_", np.array([2, -1, -1], dtype=np.int32)),
     "has dtype int32, expected int64"),
    (lambda s, a: a.__setitem__("model/value_", np.zeros((3, 3))), r"axis 1 should be 2"),
    (lambda s, a: a.__setitem__("model/value_", np.full((3, 2), 2.0)),
     "above its greatest value 1"),
    (lambda s, a: a.__setitem__("model/value_", np.full((3, 2), np.inf)), "infinite"),
    (lambda s, a: a.pop("model/feature_"), r"model\.feature_: missing"),
    (lambda s, a: a.__setitem__("model/other_", np.zeros(1)), "model/other_: not part of"),
    (lambda s, a: s.__setitem__("other_", 1), "other_ is not part of a Toy's state"),
    (lambda s, a: s.__setitem__("kind_", "c"), "'c' is not one of 'a', 'b'"),
    (lambda s, a: s.__setitem__("n_features_in_", True), "is a bool, expected int"),
    (lambda s, a: s.__setitem__("n_features_in_", 0), r"= 0 is outside \[1, None\]"),
    (lambda s, a: s.__setitem__("tables_", 2), r"tables_: has 2 entries, expected 3"),
    (lambda s, a: s.__setitem__("members_", [{"weight_": 0.5}]), "has 1 entries, expected 2"),
    (lambda s, a: s["members_"][1].__setitem__("weight_", 2.0), r"members_\.1\.weight_"),
    (lambda s, a: a.__setitem__("model/feature_", np.array([-1, -1, -1])),
     "a leaf root with other nodes"),
])
def test_damage_is_refused_naming_the_entry(change, match):
    _refused(change, match)


def test_an_absent_optional_scalar_reads_as_unset_and_a_required_one_is_refused():
    # a file written before an optional scalar was declared has no key for it
    scalars, arrays = _stored()
    del scalars["bandwidth_"]
    assert restore(Toy, {"n_classes": 2}, scalars, arrays).bandwidth_ is None
    _refused(lambda s, a: s.pop("kind_"), r"model\.kind_: missing")


def test_a_parameter_serves_as_a_symbol():
    _refused(lambda s, a: None, "axis 1 should be 3", params={"n_classes": 3})


def test_infinity_only_where_declared():
    toy = _fitted()
    toy.members_[0].weight_ = float("inf")
    with pytest.raises(TypeError, match="Leaf.weight_ is infinite, declared finite"):
        collect(toy)
    _refused(lambda s, a: s["members_"][0].__setitem__("weight_", "inf"), "is a str")
    _refused(lambda s, a: s.__setitem__("bandwidth_", "nan"), "bandwidth_: is a str")


def test_saving_refuses_state_of_another_type():
    toy = _fitted()
    toy.feature_ = toy.feature_.astype(np.int32)
    with pytest.raises(TypeError, match="Toy.feature_ is int32, declared int64"):
        collect(toy)
    toy = _fitted()
    del toy.kind_
    with pytest.raises(TypeError, match="Toy.kind_ is not set"):
        collect(toy)


def test_a_class_without_a_declaration_is_a_mistake_in_code():
    with pytest.raises(TypeError, match="declares no _fitted_state"):
        declared_state(int)
    with pytest.raises(TypeError, match="unsupported state dtype"):
        Array("object", ("*",))
