import pytest

from pyshelf import MoneyError, format_money, parse_money, split_evenly
from pyshelf.money import convert, parse_quantity, round_half_up


class TestParseMoney:
    def test_plain_amount_without_currency(self):
        assert parse_money("12.34") == (1234, None)

    def test_currency_symbols(self):
        assert parse_money("$1,234.50") == (123450, "USD")
        assert parse_money("€ 7") == (700, "EUR")

    def test_trailing_currency_code_is_upper_cased(self):
        assert parse_money("19.9 gbp") == (1990, "GBP")

    def test_negative_amount_with_symbol(self):
        assert parse_money("-$3.05") == (-305, "USD")

    @pytest.mark.parametrize(
        "text, message",
        [
            ("1.2.3", "too many decimal points"),
            ("12a", "not a number"),
            ("1.234", "more than two decimals"),
        ],
    )
    def test_invalid_amounts_are_rejected(self, text, message):
        with pytest.raises(MoneyError, match=message):
            parse_money(text)


class TestFormatMoney:
    def test_thousands_are_grouped(self):
        assert format_money(0) == "0.00"
        assert format_money(5) == "0.05"
        assert format_money(123456789) == "1,234,567.89"

    def test_exactly_three_digits_have_no_separator(self):
        assert format_money(99900) == "999.00"

    def test_negative_with_currency(self):
        assert format_money(-150075, "EUR") == "-1,500.75 EUR"


def test_split_evenly_gives_leftover_to_first_shares():
    assert split_evenly(1000, 3) == [334, 333, 333]
    assert split_evenly(11, 3) == [4, 4, 3]


def test_split_evenly_rejects_zero_parts():
    with pytest.raises(ValueError, match="positive"):
        split_evenly(100, 0)


@pytest.mark.parametrize(
    "value, step, expected",
    [(2.5, 1, 3), (2.49, 1, 2), (7.5, 5, 10), (-2.5, 1, -3)],
)
def test_round_half_up(value, step, expected):
    assert round_half_up(value, step) == expected


def test_round_half_up_rejects_non_positive_step():
    with pytest.raises(ValueError, match="step"):
        round_half_up(3, 0)


class TestQuantity:
    def test_decimal_kilograms(self):
        assert parse_quantity("2.5 kg") == (2.5, "kg")

    def test_whole_number_becomes_int(self):
        amount, unit = parse_quantity("3x")
        assert amount == 3 and isinstance(amount, int)
        assert unit == "x"

    def test_bare_number_is_pieces(self):
        assert parse_quantity(" 12 ") == (12, "pcs")

    def test_unknown_unit(self):
        with pytest.raises(ValueError, match="unknown unit"):
            parse_quantity("4 crates")

    def test_convert_whole_results_are_ints(self):
        assert convert(2.5, "kg", "g") == 2500
        assert convert(2, "dozen", "pcs") == 24

    def test_convert_rounds_to_three_decimals(self):
        assert convert(1, "ml", "l") == 0.001
        assert convert(1234, "g", "kg") == 1.234

    def test_convert_between_dimensions_fails(self):
        with pytest.raises(ValueError, match="cannot convert kg to l"):
            convert(1, "kg", "l")

    def test_convert_unknown_unit_is_lookup_error(self):
        with pytest.raises(LookupError, match="unknown unit"):
            convert(1, "kg", "stone")
