"""Money amounts as integer cents, and quantities with units."""

CURRENCY_SYMBOLS = {"$": "USD", "€": "EUR", "£": "GBP"}

# Units are converted to a base unit: grams for mass, millilitres for volume,
# pieces for counts.
UNITS = {
    "g": ("mass", 1),
    "kg": ("mass", 1000),
    "ml": ("volume", 1),
    "l": ("volume", 1000),
    "pcs": ("count", 1),
    "x": ("count", 1),
    "dozen": ("count", 12),
}


class MoneyError(ValueError):
    """Raised when a money string cannot be parsed."""


def parse_money(text):
    """Parse a money string such as "$1,234.50" or "-3.5 EUR".

    Returns a (cents, currency) tuple. A missing currency gives None.
    """
    if text is None:
        raise MoneyError("no amount given")
    s = text.strip()
    if not s:
        raise MoneyError("empty amount")
    currency = None
    negative = False
    if s.startswith("-"):
        negative = True
        s = s[1:].lstrip()
    if s[:1] in CURRENCY_SYMBOLS:
        currency = CURRENCY_SYMBOLS[s[0]]
        s = s[1:].strip()
    elif len(s) > 4 and s[-4] == " " and s[-3:].isalpha():
        currency = s[-3:].upper()
        s = s[:-4].rstrip()
    s = s.replace(",", "")
    if s.count(".") > 1:
        raise MoneyError("too many decimal points in %r" % text)
    if "." in s:
        whole, frac = s.split(".", 1)
    else:
        whole, frac = s, ""
    if not whole:
        whole = "0"
    if not whole.isdigit() or (frac and not frac.isdigit()):
        raise MoneyError("not a number: %r" % text)
    if len(frac) > 2:
        raise MoneyError("more than two decimals in %r" % text)
    cents = int(whole) * 100 + int(frac.ljust(2, "0"))
    if negative:
        cents = -cents
    return cents, currency


def format_money(cents, currency=None, thousands=","):
    """Format integer cents as a string like "1,234.50 USD"."""
    sign = "-" if cents < 0 else ""
    cents = abs(cents)
    whole, frac = divmod(cents, 100)
    digits = str(whole)
    groups = []
    while len(digits) > 3:
        groups.insert(0, digits[-3:])
        digits = digits[:-3]
    groups.insert(0, digits)
    body = "%s%s.%02d" % (sign, thousands.join(groups), frac)
    if currency is not None:
        body = body + " " + currency
    return body


def split_evenly(cents, parts):
    """Split an amount into `parts` shares that differ by at most one cent.

    The earlier shares receive the leftover cents.
    """
    if parts <= 0:
        raise ValueError("parts must be positive")
    base, rest = divmod(cents, parts)
    shares = []
    for i in range(parts):
        if i < rest:
            shares.append(base + 1)
        else:
            shares.append(base)
    return shares


def round_half_up(value, step=1):
    """Round a non-negative number to the nearest multiple of `step`, halves up."""
    if step <= 0:
        raise ValueError("step must be positive")
    if value < 0:
        return -round_half_up(-value, step)
    units = int(value // step)
    remainder = value - units * step
    if remainder * 2 >= step:
        units += 1
    return units * step


def parse_quantity(text):
    """Parse "2.5 kg", "3x" or "12" into (amount, unit).

    A bare number is a count of pieces.
    """
    s = text.strip().lower()
    if not s:
        raise ValueError("empty quantity")
    i = 0
    while i < len(s) and (s[i].isdigit() or s[i] == "."):
        i += 1
    number, unit = s[:i], s[i:].strip()
    if not number:
        raise ValueError("quantity %r has no number" % text)
    if unit == "":
        unit = "pcs"
    if unit not in UNITS:
        raise ValueError("unknown unit %r" % unit)
    amount = float(number)
    if amount == int(amount):
        amount = int(amount)
    return amount, unit


def convert(amount, unit, target):
    """Convert an amount between two units of the same dimension."""
    try:
        kind, factor = UNITS[unit]
        target_kind, target_factor = UNITS[target]
    except KeyError as exc:
        raise LookupError("unknown unit %s" % exc) from None
    if kind != target_kind:
        raise ValueError("cannot convert %s to %s" % (unit, target))
    result = amount * factor / target_factor
    if result == int(result):
        return int(result)
    return round(result, 3)
