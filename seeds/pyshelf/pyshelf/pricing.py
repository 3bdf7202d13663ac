"""Price rules: discounts, bulk tiers and tax, all in integer cents."""

from .money import round_half_up


class PriceRule:
    """A discount applied to a line when its conditions hold.

    kind is "percent" (value in whole percent) or "fixed" (value in cents off
    each unit). A rule applies when the quantity is at least min_qty and,
    if sku_prefix is set, the SKU starts with it.
    """

    def __init__(self, name, kind, value, min_qty=1, sku_prefix=None):
        if kind not in ("percent", "fixed"):
            raise ValueError("unknown rule kind %r" % kind)
        if value < 0:
            raise ValueError("rule value must not be negative")
        if kind == "percent" and value > 100:
            raise ValueError("percent discount above 100")
        self.name = name
        self.kind = kind
        self.value = value
        self.min_qty = min_qty
        self.sku_prefix = sku_prefix

    def applies(self, sku, qty):
        if qty < self.min_qty:
            return False
        if self.sku_prefix is not None and not sku.startswith(self.sku_prefix):
            return False
        return True

    def unit_discount(self, unit_price):
        """The discount in cents on one unit at the given price."""
        if self.kind == "percent":
            return round_half_up(unit_price * self.value / 100)
        return min(self.value, unit_price)

    def __repr__(self):
        return "PriceRule(%r, %r, %r)" % (self.name, self.kind, self.value)


def best_rule(rules, sku, qty, unit_price):
    """Pick the applicable rule with the largest discount; ties go to the first."""
    best = None
    best_off = 0
    for rule in rules:
        if not rule.applies(sku, qty):
            continue
        off = rule.unit_discount(unit_price)
        if off > best_off:
            best, best_off = rule, off
    return best


def tier_price(tiers, qty):
    """Unit price from bulk tiers: a list of (min_qty, unit_price).

    The tier with the highest min_qty not above qty wins.
    """
    if not tiers:
        raise ValueError("no tiers")
    chosen = None
    for min_qty, price in sorted(tiers, key=lambda t: t[0]):
        if min_qty <= qty:
            chosen = price
        else:
            break
    if chosen is None:
        raise ValueError("quantity %d is below the smallest tier" % qty)
    return chosen


def apply_tax(cents, rate_percent, inclusive=False):
    """Return (net, tax, gross) for an amount and a tax rate in percent.

    With inclusive=True the amount already contains the tax.
    """
    if rate_percent < 0:
        raise ValueError("negative tax rate")
    if inclusive:
        net = round_half_up(cents * 100 / (100 + rate_percent))
        tax = cents - net
        return net, tax, cents
    tax = round_half_up(cents * rate_percent / 100)
    return cents, tax, cents + tax


class Line:
    def __init__(self, sku, qty, unit_price):
        if qty <= 0:
            raise ValueError("quantity must be positive")
        self.sku = sku
        self.qty = qty
        self.unit_price = unit_price


def price_order(lines, rules=(), tax_rate=0, coupon=None):
    """Price an order and return a summary dict.

    coupon is an amount in cents taken off the subtotal after line discounts,
    never making it negative.
    """
    subtotal = 0
    discount = 0
    applied = []
    for line in lines:
        gross = line.qty * line.unit_price
        rule = best_rule(rules, line.sku, line.qty, line.unit_price)
        if rule is not None:
            off = rule.unit_discount(line.unit_price) * line.qty
            discount += off
            applied.append((line.sku, rule.name))
        subtotal += gross
    after = subtotal - discount
    if coupon:
        taken = min(coupon, after)
        discount += taken
        after -= taken
    net, tax, total = apply_tax(after, tax_rate)
    return {
        "subtotal": subtotal,
        "discount": discount,
        "net": net,
        "tax": tax,
        "total": total,
        "rules": applied,
    }


def margin_percent(cost, price):
    """Gross margin of a sale in percent, rounded to one decimal."""
    if price == 0:
        return 0.0
    return round((price - cost) * 100 / price, 1)
