import pytest

from pyshelf import QueryError, group_count, order_by, paginate, parse_condition, pluck, where

PRODUCTS = [
    {"sku": "TEA-GRN-050", "name": "Green Tea", "price": 450, "active": True, "stock": {"bin": "A1"}},
    {"sku": "TEA-BLK-100", "name": "Black Tea", "price": 390, "active": False},
    {"sku": "COF-ARA-250", "name": "Arabica Coffee", "price": 1200, "active": True, "stock": {"bin": "B2"}},
    {"sku": "JAM-STR-200", "name": "Strawberry Jam", "price": 300, "active": True},
]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("price >= 400", ("price", ">=", 400)),
        ("name ~ tea", ("name", "~", "tea")),
        ("sku != 'JAM-STR-200'", ("sku", "!=", "JAM-STR-200")),
        ("delta > -5", ("delta", ">", -5)),
    ],
)
def test_parse_condition(text, expected):
    assert parse_condition(text) == expected


@pytest.mark.parametrize("text, message", [("price", "no operator"), ("price >=  ", "incomplete")])
def test_parse_condition_errors(text, message):
    with pytest.raises(QueryError, match=message):
        parse_condition(text)


def test_where_all_conditions():
    rows = where(PRODUCTS, "name ~ TEA", "price > 400")
    assert pluck(rows, "sku") == ["TEA-GRN-050"]


@pytest.mark.parametrize(
    "condition, skus",
    [
        ("price < 390", ["JAM-STR-200"]),
        ("price > 390", ["TEA-GRN-050", "COF-ARA-250"]),
        ("price >= 450", ["TEA-GRN-050", "COF-ARA-250"]),
        ("stock.bin < B", ["TEA-GRN-050"]),
    ],
)
def test_where_comparisons(condition, skus):
    assert pluck(where(PRODUCTS, condition), "sku") == skus


def test_where_any_condition():
    rows = where(PRODUCTS, "price <= 300", "active = false", any_of=True)
    assert pluck(rows, "sku") == ["TEA-BLK-100", "JAM-STR-200"]


def test_where_on_nested_field_and_missing_field():
    assert pluck(where(PRODUCTS, "stock.bin = B2"), "sku") == ["COF-ARA-250"]
    assert len(where(PRODUCTS, "stock.bin != B2")) == 3


def test_order_by_descending_with_missing_last():
    rows = order_by(PRODUCTS, "-stock.bin")
    assert pluck(rows, "sku") == ["COF-ARA-250", "TEA-GRN-050", "TEA-BLK-100", "JAM-STR-200"]


class TestPaginate:
    rows = list(range(23))

    def test_middle_page(self):
        assert paginate(self.rows, 2, per_page=10) == (list(range(10, 20)), 3)

    def test_last_partial_page(self):
        assert paginate(self.rows, 3, per_page=10) == ([20, 21, 22], 3)

    def test_page_count_for_exact_and_empty_lists(self):
        assert paginate(self.rows[:20], 2, per_page=10) == (list(range(10, 20)), 2)
        assert paginate([], 1) == ([], 1)

    def test_page_zero_is_rejected(self):
        with pytest.raises(ValueError, match="pages start at 1"):
            paginate(self.rows, 0)


def test_group_count():
    assert group_count(PRODUCTS, "active") == {True: 3, False: 1}
