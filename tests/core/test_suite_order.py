"""The order the suite's tests are handed out in (tests/conftest.py): slow ones first,
transactional ones spread through the rest rather than bunched at the end."""
from tests.conftest import spread_evenly


def test_the_few_are_spread_through_the_many_in_their_order():
    merged = spread_evenly(["a", "b", "c"], among=list(range(9)))

    assert [item for item in merged if isinstance(item, str)] == ["a", "b", "c"]
    assert [item for item in merged if isinstance(item, int)] == list(range(9))
    positions = [merged.index(letter) for letter in "abc"]
    gaps = [later - earlier for earlier, later in zip(positions, positions[1:])]
    assert max(gaps) - min(gaps) <= 1 and positions[0] <= 2 and positions[-1] >= len(merged) - 3


def test_nothing_is_lost_when_either_side_is_empty():
    assert spread_evenly([], among=[1, 2]) == [1, 2]
    assert spread_evenly(["a"], among=[]) == ["a"]
