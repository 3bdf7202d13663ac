import pytest

from pyshelf import pad_columns, parse_tags, sku_parts, slugify, title_case, truncate, wrap


class TestSlugify:
    def test_accents_and_punctuation(self):
        assert slugify("Café Crème, 250g!") == "cafe-creme-250g"

    def test_leading_and_repeated_separators_collapse(self):
        assert slugify("  --Green   Tea--  ") == "green-tea"

    def test_max_length_does_not_end_with_separator(self):
        assert slugify("Earl Grey Tea", max_length=10) == "earl-grey"


class TestTruncate:
    def test_short_text_is_unchanged(self):
        assert truncate("Green tea", 9) == "Green tea"

    def test_cuts_at_word_boundary(self):
        assert truncate("Organic green tea from Japan", 20) == "Organic green..."

    def test_single_long_word_is_cut_hard(self):
        assert truncate("Supercalifragilistic", 10) == "Superca..."

    def test_width_smaller_than_ellipsis(self):
        with pytest.raises(ValueError, match="smaller than the ellipsis"):
            truncate("abc def", 2)


def test_wrap_greedy_lines():
    assert wrap("the quick brown fox jumps over", 10) == ["the quick", "brown fox", "jumps over"]


def test_wrap_splits_long_words():
    assert wrap("ab abcdefgh c", 3) == ["ab", "abc", "def", "gh", "c"]


def test_parse_tags_deduplicates_and_normalises():
    assert parse_tags("Red, blue ,#sale,, red,BLUE") == ["red", "blue", "sale"]


def test_sku_parts():
    assert sku_parts("tea-grn-050") == ("TEA", "GRN", 50)


@pytest.mark.parametrize("sku", ["TEA-GRN", "TEA-GRN-X50"])
def test_sku_parts_rejects_malformed(sku):
    with pytest.raises(ValueError, match="SKU"):
        sku_parts(sku)


def test_title_case_keeps_small_words_lower():
    assert title_case("jar of the finest HONEY") == "Jar of the Finest HONEY"


def test_pad_columns():
    table = pad_columns([["sku", "qty"], ["TEA-GRN-050", "4"]])
    assert table == "sku          qty\nTEA-GRN-050  4"
