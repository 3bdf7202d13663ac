package dev.sweforge.javashelf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class TextUtilTest {
    @Test
    void slugifyCollapsesSeparators() {
        assertEquals("the-art-of-loops-2nd-ed", TextUtil.slugify("  The Art of Loops -- 2nd Ed. "));
        assertEquals("a-b", TextUtil.slugify("a?!b"));
        assertEquals("", TextUtil.slugify("!!"));
        assertEquals("caf", TextUtil.slugify("Café"));
    }

    @Test
    void truncateCutsWithAnEllipsis() {
        assertEquals("short", TextUtil.truncate("short", 5));
        assertEquals("shorter", TextUtil.truncate("shorter", 10));
        assertEquals("sh...", TextUtil.truncate("shorter", 5));
        assertEquals("a...", TextUtil.truncate("a bcdef", 5));
        assertEquals("x...", TextUtil.truncate("xyzzy", 4));
    }

    @Test
    void truncateNeedsRoomForTheEllipsis() {
        assertThrows(IllegalArgumentException.class, () -> TextUtil.truncate("abc", 3));
    }

    @Test
    void sortKeyDropsLeadingArticles() {
        assertEquals("art of loops", TextUtil.sortKey("The Art of Loops"));
        assertEquals("catalog", TextUtil.sortKey(" A Catalog"));
        assertEquals("owl", TextUtil.sortKey("An Owl"));
        assertEquals("theory", TextUtil.sortKey("Theory"));
        assertEquals("the", TextUtil.sortKey("The"));
        assertEquals("a", TextUtil.sortKey("A"));
    }

    @Test
    void initialsOfNames() {
        assertEquals("U.K.L.G.", TextUtil.initials("ursula k. le guin"));
        assertEquals("A.L.", TextUtil.initials("  Ada   Lane "));
        assertEquals("", TextUtil.initials(""));
    }

    @Test
    void wordCountCountsRuns() {
        assertEquals(0, TextUtil.wordCount(""));
        assertEquals(0, TextUtil.wordCount(" -- "));
        assertEquals(1, TextUtil.wordCount("word"));
        assertEquals(4, TextUtil.wordCount("  the art, of loops! "));
        assertEquals(2, TextUtil.wordCount("2nd-ed"));
    }
}
