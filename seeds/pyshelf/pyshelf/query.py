"""A tiny filter language over lists of dicts.

A condition is "field op value", e.g. "price >= 250", "name ~ tea",
"status != sold". Values that look like integers are compared as integers.
"""

OPERATORS = ("<=", ">=", "!=", "=", "<", ">", "~")


class QueryError(ValueError):
    """Raised for a malformed condition."""


def _coerce(raw):
    raw = raw.strip()
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
        return raw[1:-1]
    if raw.lstrip("-").isdigit():
        return int(raw)
    if raw.lower() in ("true", "false"):
        return raw.lower() == "true"
    return raw


def parse_condition(text):
    """Split a condition into (field, op, value) at the first operator."""
    for idx in range(1, len(text)):
        for op in OPERATORS:
            if not text.startswith(op, idx):
                continue
            field = text[:idx].strip()
            value = text[idx + len(op):]
            if not field or not value.strip():
                raise QueryError("incomplete condition %r" % text)
            return field, op, _coerce(value)
    raise QueryError("no operator in %r" % text)


def _get(row, field):
    """Look up a dotted field such as "stock.warehouse"."""
    value = row
    for part in field.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def matches(row, condition):
    field, op, want = condition
    have = _get(row, field)
    if have is None:
        return op == "!="
    if op == "~":
        return str(want).lower() in str(have).lower()
    if op == "=":
        return have == want
    if op == "!=":
        return have != want
    try:
        if op == "<":
            return have < want
        if op == "<=":
            return have <= want
        if op == ">":
            return have > want
        return have >= want
    except TypeError:
        raise QueryError("cannot compare %r with %r" % (have, want)) from None


def where(rows, *conditions, any_of=False):
    """Rows matching all conditions (or any of them with any_of=True)."""
    parsed = [parse_condition(c) for c in conditions]
    out = []
    for row in rows:
        results = [matches(row, c) for c in parsed]
        if any_of and any(results):
            out.append(row)
        elif not any_of and all(results):
            out.append(row)
    return out


def order_by(rows, spec):
    """Sort by "field" or "-field" (descending); rows lacking it go last."""
    descending = spec.startswith("-")
    field = spec[1:] if descending else spec
    present = [r for r in rows if _get(r, field) is not None]
    missing = [r for r in rows if _get(r, field) is None]
    present = sorted(present, key=lambda r: _get(r, field), reverse=descending)
    return present + missing


def paginate(rows, page, per_page=10):
    """Return (items, total_pages) for a 1-based page number."""
    if per_page < 1:
        raise ValueError("per_page must be at least 1")
    if page < 1:
        raise ValueError("pages start at 1")
    total_pages = max(1, (len(rows) + per_page - 1) // per_page)
    start = (page - 1) * per_page
    return rows[start:start + per_page], total_pages


def pluck(rows, field, default=None):
    """The value of one field from every row."""
    values = []
    for row in rows:
        value = _get(row, field)
        values.append(default if value is None else value)
    return values


def group_count(rows, field):
    """Count rows per value of a field, as a dict sorted by count then key."""
    counts = {}
    for row in rows:
        key = _get(row, field)
        counts[key] = counts.get(key, 0) + 1
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0])))
    return dict(ordered)
