"""Text helpers for product names and descriptions."""

_ACCENTS = {
    "à": "a", "á": "a", "â": "a", "ä": "a", "ç": "c", "è": "e", "é": "e",
    "ê": "e", "ë": "e", "í": "i", "ï": "i", "ñ": "n", "ó": "o", "ô": "o",
    "ö": "o", "ú": "u", "ü": "u", "ß": "ss",
}


def slugify(text, sep="-", max_length=None):
    """Lower-case ASCII slug: "Café Crème 250g" -> "cafe-creme-250g"."""
    out = []
    pending_sep = False
    for ch in text.lower():
        ch = _ACCENTS.get(ch, ch)
        if ch.isascii() and ch.isalnum():
            if pending_sep and out:
                out.append(sep)
            out.append(ch)
            pending_sep = False
        else:
            pending_sep = True
    slug = "".join(out)
    if max_length is not None and len(slug) > max_length:
        slug = slug[:max_length].rstrip(sep)
    return slug


def truncate(text, width, ellipsis="..."):
    """Shorten text to at most `width` characters, cutting at a word boundary."""
    if width < len(ellipsis):
        raise ValueError("width is smaller than the ellipsis")
    if len(text) <= width:
        return text
    cut = text[: width - len(ellipsis)]
    space = cut.rfind(" ")
    if space > 0:
        cut = cut[:space]
    return cut.rstrip() + ellipsis


def wrap(text, width):
    """Greedy word wrap into lines of at most `width` characters.

    A word longer than the width is split across lines.
    """
    if width < 1:
        raise ValueError("width must be at least 1")
    lines = []
    current = ""
    for word in text.split():
        while len(word) > width:
            if current:
                lines.append(current)
                current = ""
            lines.append(word[:width])
            word = word[width:]
        if not current:
            current = word
        elif len(current) + 1 + len(word) <= width:
            current = current + " " + word
        else:
            lines.append(current)
            current = word
    if current:
        lines.append(current)
    return lines


def title_case(text, small_words=("a", "an", "and", "of", "the", "for", "with")):
    """Title-case a product name, keeping small words lower-case inside it."""
    words = text.split()
    out = []
    for i, word in enumerate(words):
        lower = word.lower()
        if 0 < i < len(words) - 1 and lower in small_words:
            out.append(lower)
        elif word.isupper() and len(word) > 1:
            out.append(word)
        else:
            out.append(lower[:1].upper() + lower[1:])
    return " ".join(out)


def parse_tags(text, limit=10):
    """Split "red, Blue ,#sale" into unique lower-case tags, in order."""
    tags = []
    for raw in text.split(","):
        tag = raw.strip().lstrip("#").lower()
        if not tag or tag in tags:
            continue
        tags.append(tag)
        if len(tags) >= limit:
            break
    return tags


def sku_parts(sku):
    """Split an SKU like "TEA-GRN-050" into (category, variant, size)."""
    parts = sku.upper().split("-", 2)
    if len(parts) != 3:
        raise ValueError("malformed SKU %r" % sku)
    category, variant, size = parts
    if not size.isdigit():
        raise ValueError("SKU size must be numeric: %r" % sku)
    return category, variant, int(size)


def pad_columns(rows, gap=2):
    """Render rows of strings as left-aligned columns (a plain-text table)."""
    if not rows:
        return ""
    widths = []
    for row in rows:
        for i, cell in enumerate(row):
            if i >= len(widths):
                widths.append(len(cell))
            elif len(cell) > widths[i]:
                widths[i] = len(cell)
    lines = []
    for row in rows:
        cells = [cell.ljust(widths[i]) for i, cell in enumerate(row)]
        lines.append((" " * gap).join(cells).rstrip())
    return "\n".join(lines)
