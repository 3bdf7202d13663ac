import pytest

from pyshelf import Line, PriceRule, apply_tax, best_rule, price_order, tier_price


def test_percent_rule_discount_rounds_half_up():
    rule = PriceRule("summer", "percent", 15)
    assert rule.unit_discount(250) == 38  # 37.5 -> 38
    assert PriceRule("free", "percent", 100).unit_discount(250) == 250


def test_fixed_rule_never_exceeds_the_price():
    rule = PriceRule("flat", "fixed", 500)
    assert rule.unit_discount(300) == 300
    assert rule.unit_discount(800) == 500


def test_rule_applies_from_min_qty_and_sku_prefix():
    rule = PriceRule("tea-bulk", "percent", 10, min_qty=3, sku_prefix="TEA-")
    assert rule.applies("TEA-GRN-050", 3)
    assert not rule.applies("TEA-GRN-050", 2)
    assert not rule.applies("COF-ARA-250", 5)


@pytest.mark.parametrize(
    "kind, value, message",
    [("bogus", 5, "unknown rule kind"), ("fixed", -1, "negative"), ("percent", 101, "above 100")],
)
def test_invalid_rules_are_rejected(kind, value, message):
    with pytest.raises(ValueError, match=message):
        PriceRule("r", kind, value)


def test_best_rule_picks_largest_discount():
    rules = [
        PriceRule("ten", "percent", 10),
        PriceRule("flat", "fixed", 150),
        PriceRule("twenty", "percent", 20, min_qty=10),
    ]
    assert best_rule(rules, "X-1", 1, 1000).name == "flat"
    assert best_rule(rules, "X-1", 10, 1000).name == "twenty"
    tied = [PriceRule("first", "fixed", 100), PriceRule("second", "percent", 10)]
    assert best_rule(tied, "X-1", 1, 1000).name == "first"


class TestTierPrice:
    tiers = [(1, 500), (10, 450), (50, 400)]

    @pytest.mark.parametrize("qty, price", [(9, 500), (10, 450), (49, 450), (50, 400)])
    def test_tier_boundaries(self, qty, price):
        assert tier_price(self.tiers, qty) == price

    def test_unsorted_tiers_are_sorted_first(self):
        assert tier_price([(10, 90), (1, 100)], 12) == 90

    def test_below_smallest_tier(self):
        with pytest.raises(ValueError, match="below the smallest tier"):
            tier_price([(5, 100)], 4)


class TestTax:
    def test_exclusive_tax_is_added(self):
        assert apply_tax(1999, 20) == (1999, 400, 2399)

    def test_inclusive_tax_is_extracted(self):
        assert apply_tax(1200, 20, inclusive=True) == (1000, 200, 1200)

    def test_inclusive_tax_rounding(self):
        assert apply_tax(1000, 7, inclusive=True) == (935, 65, 1000)

    def test_negative_rate_is_rejected(self):
        with pytest.raises(ValueError, match="negative tax rate"):
            apply_tax(100, -1)


class TestPriceOrder:
    def test_order_with_rule_and_tax(self):
        lines = [Line("TEA-GRN-050", 4, 450), Line("COF-ARA-250", 1, 1200)]
        rules = [PriceRule("tea", "percent", 10, min_qty=3, sku_prefix="TEA-")]
        summary = price_order(lines, rules, tax_rate=10)
        assert summary == {
            "subtotal": 3000,
            "discount": 180,
            "net": 2820,
            "tax": 282,
            "total": 3102,
            "rules": [("TEA-GRN-050", "tea")],
        }

    def test_coupon_cannot_make_total_negative(self):
        summary = price_order([Line("A-B-1", 1, 300)], coupon=1000)
        assert summary["discount"] == 300
        assert summary["total"] == 0

    def test_coupon_is_taken_after_line_discounts(self):
        lines = [Line("A-B-1", 2, 1000)]
        rules = [PriceRule("flat", "fixed", 100)]
        summary = price_order(lines, rules, coupon=500)
        assert summary["discount"] == 700
        assert summary["net"] == 1300
