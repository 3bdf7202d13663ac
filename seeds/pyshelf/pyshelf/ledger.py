"""A stock ledger: receipts, shipments, reservations and a movement log."""


class StockError(Exception):
    """Raised when a movement would make stock inconsistent."""


class Movement:
    __slots__ = ("seq", "sku", "kind", "qty", "ref")

    def __init__(self, seq, sku, kind, qty, ref=None):
        self.seq = seq
        self.sku = sku
        self.kind = kind
        self.qty = qty
        self.ref = ref

    def as_tuple(self):
        return (self.seq, self.sku, self.kind, self.qty, self.ref)


class Ledger:
    """Tracks on-hand and reserved stock per SKU.

    available = on_hand - reserved, and never goes below zero.
    """

    def __init__(self, reorder_level=5):
        self.reorder_level = reorder_level
        self._on_hand = {}
        self._reserved = {}
        self._holds = {}
        self._log = []
        self._next_hold = 1

    def _record(self, sku, kind, qty, ref=None):
        self._log.append(Movement(len(self._log) + 1, sku, kind, qty, ref))

    def on_hand(self, sku):
        return self._on_hand.get(sku, 0)

    def reserved(self, sku):
        return self._reserved.get(sku, 0)

    def available(self, sku):
        return self.on_hand(sku) - self.reserved(sku)

    def receive(self, sku, qty, ref=None):
        if qty <= 0:
            raise ValueError("received quantity must be positive")
        self._on_hand[sku] = self.on_hand(sku) + qty
        self._record(sku, "receive", qty, ref)
        return self._on_hand[sku]

    def ship(self, sku, qty, ref=None):
        """Ship unreserved stock."""
        if qty <= 0:
            raise ValueError("shipped quantity must be positive")
        if qty > self.available(sku):
            raise StockError(
                "cannot ship %d of %s: only %d available" % (qty, sku, self.available(sku))
            )
        self._on_hand[sku] -= qty
        self._record(sku, "ship", -qty, ref)
        return self._on_hand[sku]

    def reserve(self, sku, qty):
        """Reserve stock for later; returns a hold id."""
        if qty <= 0:
            raise ValueError("reserved quantity must be positive")
        if self.available(sku) < qty:
            raise StockError("not enough %s to reserve %d" % (sku, qty))
        hold = self._next_hold
        self._next_hold += 1
        self._holds[hold] = (sku, qty)
        self._reserved[sku] = self.reserved(sku) + qty
        self._record(sku, "reserve", qty, hold)
        return hold

    def release(self, hold):
        """Cancel a reservation; the stock becomes available again."""
        try:
            sku, qty = self._holds.pop(hold)
        except KeyError:
            raise LookupError("no such hold: %r" % hold) from None
        self._reserved[sku] -= qty
        self._record(sku, "release", qty, hold)
        return qty

    def fulfil(self, hold):
        """Ship the stock held by a reservation."""
        try:
            sku, qty = self._holds.pop(hold)
        except KeyError:
            raise LookupError("no such hold: %r" % hold) from None
        self._reserved[sku] -= qty
        self._on_hand[sku] -= qty
        self._record(sku, "fulfil", -qty, hold)
        return qty

    def adjust(self, sku, counted):
        """Set on-hand stock to a physical count; returns the difference."""
        if counted < 0:
            raise ValueError("a count cannot be negative")
        if counted < self.reserved(sku):
            raise StockError("count %d is below reserved stock" % counted)
        diff = counted - self.on_hand(sku)
        if diff != 0:
            self._on_hand[sku] = counted
            self._record(sku, "adjust", diff)
        return diff

    def needs_reorder(self):
        """SKUs whose available stock is at or below the reorder level, sorted."""
        low = [sku for sku in self._on_hand if self.available(sku) <= self.reorder_level]
        return sorted(low)

    def history(self, sku=None, kinds=None):
        """Movements as tuples, optionally filtered by SKU and kinds."""
        out = []
        for m in self._log:
            if sku is not None and m.sku != sku:
                continue
            if kinds is not None and m.kind not in kinds:
                continue
            out.append(m.as_tuple())
        return out

    def balance_at(self, sku, seq):
        """On-hand stock of a SKU just after movement number `seq`."""
        total = 0
        for m in self._log:
            if m.seq > seq:
                break
            if m.sku != sku or m.kind in ("reserve", "release"):
                continue
            total += m.qty
        return total

    def top_movers(self, n=3):
        """The n SKUs with the most units shipped or fulfilled, busiest first."""
        if n < 1:
            return []
        shipped = {}
        for m in self._log:
            if m.kind == "ship" or m.kind == "fulfil":
                shipped[m.sku] = shipped.get(m.sku, 0) - m.qty
        ranked = sorted(shipped.items(), key=lambda kv: (-kv[1], kv[0]))
        return [sku for sku, _ in ranked[:n]]
