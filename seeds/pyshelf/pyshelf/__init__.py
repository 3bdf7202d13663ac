"""pyshelf: a small toolkit for shop inventories."""

from .ledger import Ledger, Movement, StockError
from .money import (
    MoneyError,
    convert,
    format_money,
    parse_money,
    parse_quantity,
    round_half_up,
    split_evenly,
)
from .periods import Period, gaps, merge, parse_period, split_weeks, total_days
from .pricing import Line, PriceRule, apply_tax, best_rule, margin_percent, price_order, tier_price
from .query import QueryError, group_count, order_by, paginate, parse_condition, pluck, where
from .text import pad_columns, parse_tags, sku_parts, slugify, title_case, truncate, wrap

__version__ = "0.1.0"

__all__ = [
    "Ledger",
    "Line",
    "MoneyError",
    "Movement",
    "Period",
    "PriceRule",
    "QueryError",
    "StockError",
    "apply_tax",
    "best_rule",
    "convert",
    "format_money",
    "gaps",
    "group_count",
    "margin_percent",
    "merge",
    "order_by",
    "pad_columns",
    "paginate",
    "parse_condition",
    "parse_money",
    "parse_period",
    "parse_quantity",
    "parse_tags",
    "pluck",
    "price_order",
    "round_half_up",
    "sku_parts",
    "slugify",
    "split_evenly",
    "split_weeks",
    "tier_price",
    "title_case",
    "total_days",
    "truncate",
    "where",
]
