"""Periods of days as half-open intervals [start, end) of day numbers."""


class Period:
    __slots__ = ("start", "end")

    def __init__(self, start, end):
        if end < start:
            raise ValueError("period ends before it starts: %d > %d" % (start, end))
        self.start = start
        self.end = end

    def __len__(self):
        return self.end - self.start

    def __eq__(self, other):
        if not isinstance(other, Period):
            return NotImplemented
        return self.start == other.start and self.end == other.end

    def __hash__(self):
        return hash((self.start, self.end))

    def __repr__(self):
        return "Period(%d, %d)" % (self.start, self.end)

    def contains(self, day):
        return self.start <= day < self.end

    def overlaps(self, other):
        return self.start < other.end and other.start < self.end

    def intersection(self, other):
        """The common part of two periods, or None when they do not overlap."""
        start = max(self.start, other.start)
        end = min(self.end, other.end)
        if start >= end:
            return None
        return Period(start, end)

    def shift(self, days):
        return Period(self.start + days, self.end + days)


def merge(periods):
    """Merge overlapping or touching periods into a sorted, disjoint list."""
    result = []
    for p in sorted(periods, key=lambda p: (p.start, p.end)):
        if len(p) == 0:
            continue
        if result and p.start <= result[-1].end:
            last = result[-1]
            if p.end > last.end:
                result[-1] = Period(last.start, p.end)
        else:
            result.append(p)
    return result


def gaps(periods, within):
    """The parts of `within` that no period covers."""
    out = []
    cursor = within.start
    for p in merge(periods):
        if p.end <= within.start:
            continue
        if p.start >= within.end:
            break
        if p.start > cursor:
            out.append(Period(cursor, p.start))
        cursor = max(cursor, p.end)
    if cursor < within.end:
        out.append(Period(cursor, within.end))
    return out


def total_days(periods):
    """Number of distinct days covered by the periods."""
    return sum(len(p) for p in merge(periods))


def split_weeks(period, week_start=0):
    """Split a period at every day d with d % 7 == week_start."""
    if not 0 <= week_start < 7:
        raise ValueError("week_start must be between 0 and 6")
    pieces = []
    start = period.start
    while start < period.end:
        offset = (week_start - start) % 7
        if offset == 0:
            offset = 7
        end = min(start + offset, period.end)
        pieces.append(Period(start, end))
        start = end
    return pieces


def parse_period(text):
    """Parse "10..17" (inclusive end day) or "10+7" (start and length)."""
    s = text.replace(" ", "")
    try:
        if ".." in s:
            a, b = s.split("..", 1)
            return Period(int(a), int(b) + 1)
        if "+" in s:
            a, n = s.split("+", 1)
            return Period(int(a), int(a) + int(n))
    except ValueError as exc:
        raise ValueError("bad period %r: %s" % (text, exc)) from None
    raise ValueError("bad period %r" % text)
