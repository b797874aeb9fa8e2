"""util.record: the namedtuple stand-in behaves as the namedtuples it replaced were used."""

import pickle

import pytest

from maestro.util.record import record

pytestmark = pytest.mark.in_process

Point = record("Point", "x y label", defaults=("",), module=__name__)


def test_fields_by_position_keyword_and_default():
    assert Point(1, 2) == (1, 2, "") == Point(y=2, x=1)
    assert Point(1, 2, "p").label == "p" and Point(1, y=2).y == 2
    assert Point._fields == ("x", "y", "label") and isinstance(Point(1, 2), tuple)


@pytest.mark.parametrize("call", [lambda: Point(1), lambda: Point(1, 2, 3, 4), lambda: Point(1, 2, x=3),
                                  lambda: Point(1, 2, z=0)])
def test_wrong_arguments_raise_type_error(call):
    with pytest.raises(TypeError):
        call()


def test_replace_asdict_repr_pickle_and_read_only_fields():
    point = Point(1, 2)
    assert point._replace(y=5) == Point(1, 5) and point._asdict() == {"x": 1, "y": 2, "label": ""}
    assert repr(point) == "Point(x=1, y=2, label='')"
    assert pickle.loads(pickle.dumps(point)) == point and type(pickle.loads(pickle.dumps(point))) is Point
    with pytest.raises(AttributeError):
        point.x = 3
    with pytest.raises(TypeError):
        point._replace(z=1)
