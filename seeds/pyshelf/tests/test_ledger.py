import pytest

from pyshelf import Ledger, StockError


@pytest.fixture
def ledger():
    led = Ledger(reorder_level=5)
    led.receive("TEA", 20, ref="PO-1")
    led.receive("COF", 8, ref="PO-2")
    return led


def test_receive_adds_to_on_hand(ledger):
    assert ledger.receive("TEA", 5) == 25
    assert ledger.on_hand("TEA") == 25


def test_ship_reduces_stock(ledger):
    assert ledger.ship("TEA", 7) == 13
    assert ledger.available("TEA") == 13


def test_cannot_ship_more_than_available(ledger):
    ledger.reserve("COF", 5)
    with pytest.raises(StockError, match="only 3 available"):
        ledger.ship("COF", 4)
    assert ledger.on_hand("COF") == 8


def test_ship_exactly_all_available(ledger):
    assert ledger.ship("COF", 8) == 0


@pytest.mark.parametrize("method", ["ship", "reserve"])
def test_quantities_must_be_positive(ledger, method):
    with pytest.raises(ValueError, match="must be positive"):
        getattr(ledger, method)("TEA", 0)


class TestReservations:
    def test_reserve_lowers_available_not_on_hand(self, ledger):
        ledger.reserve("TEA", 6)
        assert ledger.on_hand("TEA") == 20
        assert ledger.reserved("TEA") == 6
        assert ledger.available("TEA") == 14

    def test_reserve_more_than_available_fails(self, ledger):
        ledger.reserve("COF", 6)
        with pytest.raises(StockError, match="not enough COF"):
            ledger.reserve("COF", 3)
        ledger.reserve("COF", 2)
        assert ledger.available("COF") == 0

    def test_release_makes_stock_available_again(self, ledger):
        hold = ledger.reserve("TEA", 6)
        assert ledger.release(hold) == 6
        assert ledger.available("TEA") == 20

    def test_fulfil_ships_the_held_stock(self, ledger):
        hold = ledger.reserve("TEA", 6)
        other = ledger.reserve("COF", 2)
        assert other != hold
        assert ledger.fulfil(hold) == 6
        assert ledger.on_hand("TEA") == 14
        assert ledger.reserved("TEA") == 0
        assert ledger.reserved("COF") == 2

    def test_hold_cannot_be_used_twice(self, ledger):
        hold = ledger.reserve("TEA", 2)
        ledger.fulfil(hold)
        with pytest.raises(LookupError, match="no such hold"):
            ledger.release(hold)


class TestAdjust:
    def test_adjust_returns_difference(self, ledger):
        assert ledger.adjust("TEA", 17) == -3
        assert ledger.on_hand("TEA") == 17

    def test_adjust_to_same_count_records_nothing(self, ledger):
        before = len(ledger.history())
        assert ledger.adjust("TEA", 20) == 0
        assert len(ledger.history()) == before

    def test_adjust_below_reserved_fails(self, ledger):
        ledger.reserve("TEA", 10)
        with pytest.raises(StockError, match="below reserved"):
            ledger.adjust("TEA", 9)
        assert ledger.adjust("TEA", 10) == -10


def test_needs_reorder_uses_available_stock(ledger):
    ledger.receive("JAM", 5)
    ledger.reserve("TEA", 15)
    assert ledger.needs_reorder() == ["JAM", "TEA"]


def test_history_filters_by_sku_and_kind(ledger):
    ledger.ship("TEA", 2, ref="SO-1")
    hold = ledger.reserve("COF", 3)
    assert ledger.history(sku="TEA") == [
        (1, "TEA", "receive", 20, "PO-1"),
        (3, "TEA", "ship", -2, "SO-1"),
    ]
    assert ledger.history(kinds=("reserve",)) == [(4, "COF", "reserve", 3, hold)]


def test_balance_at_replays_movements(ledger):
    ledger.ship("TEA", 4)  # seq 3
    ledger.reserve("TEA", 2)  # seq 4, does not change on-hand
    ledger.receive("TEA", 10)  # seq 5
    assert ledger.balance_at("TEA", 1) == 20
    assert ledger.balance_at("TEA", 4) == 16
    assert ledger.balance_at("TEA", 5) == 26


def test_top_movers(ledger):
    ledger.ship("COF", 5)
    ledger.ship("TEA", 2)
    assert ledger.top_movers(1) == ["COF"]
