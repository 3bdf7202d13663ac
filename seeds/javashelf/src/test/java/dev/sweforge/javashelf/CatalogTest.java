package dev.sweforge.javashelf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class CatalogTest {
    private Catalog catalog;

    @BeforeEach
    void fill() {
        catalog = new Catalog();
        catalog.add(new Book("9780306406157", "The Art of Loops", "Ada Lane", 1999, 2, "book"));
        catalog.add(new Book("0-8044-2957-X", "Branches", "Ada Lane", 2010, 1, "book"));
        catalog.add(new Book("9780140449136", "A Catalog of Clouds", "Bo Reyes", 2010, 1, "magazine"));
        catalog.add(new Book("9780679783275", "Art Films", "Cy Moss", 2021, 3, "dvd"));
    }

    private static List<String> titles(List<Book> books) {
        List<String> out = new ArrayList<>();
        for (Book b : books) {
            out.add(b.title());
        }
        return out;
    }

    @Test
    void bookValidatesItsFields() {
        assertThrows(IllegalArgumentException.class, () -> new Book("123", "T", "A", 2000, 1, "book"));
        assertThrows(IllegalArgumentException.class, () -> new Book("0306406152", " ", "A", 2000, 1, "book"));
        assertThrows(IllegalArgumentException.class, () -> new Book("0306406152", "T", "A", 2000, 0, "book"));
        Book book = new Book("0-306-40615-2", " Title ", null, 2000, 1, "book");
        assertEquals("0306406152", book.isbn());
        assertEquals("Title", book.title());
        assertEquals("", book.author());
        assertEquals("Title (, 2000)", book.toString());
    }

    @Test
    void booksAreEqualByIsbn() {
        Book a = new Book("0306406152", "One", "A", 2000, 1, "book");
        Book b = new Book("0-306-40615-2", "Two", "B", 2001, 2, "dvd");
        Book c = new Book("9780306406157", "One", "A", 2000, 1, "book");
        assertEquals(a, b);
        assertEquals(a.hashCode(), b.hashCode());
        assertNotEquals(a, c);
        assertNotEquals(a, "0306406152");
    }

    @Test
    void duplicateIsbnIsRejected() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> catalog.add(new Book("978-0-306-40615-7", "Copy", "X", 2000, 1, "book")));
        assertEquals("duplicate ISBN: 9780306406157", e.getMessage());
        assertEquals(4, catalog.size());
    }

    @Test
    void getNormalizesAndRejectsUnknown() {
        assertEquals("Branches", catalog.get("080442957x").title());
        assertThrows(IllegalArgumentException.class, () -> catalog.get("0306406152"));
    }

    @Test
    void checkoutUntilNoCopyIsLeft() {
        assertEquals(2, catalog.available("9780306406157"));
        catalog.checkout("9780306406157");
        assertEquals(1, catalog.available("9780306406157"));
        catalog.checkout("9780306406157");
        assertEquals(0, catalog.available("9780306406157"));
        assertThrows(IllegalStateException.class, () -> catalog.checkout("9780306406157"));
        assertEquals(0, catalog.available("9780306406157"));
    }

    @Test
    void checkinReturnsACopy() {
        assertThrows(IllegalStateException.class, () -> catalog.checkin("080442957X"));
        catalog.checkout("080442957X");
        catalog.checkin("080442957X");
        assertEquals(1, catalog.available("080442957X"));
        assertThrows(IllegalStateException.class, () -> catalog.checkin("080442957X"));
    }

    @Test
    void removeOnlyWhenNothingIsOnLoan() {
        catalog.checkout("9780679783275");
        assertThrows(IllegalStateException.class, () -> catalog.remove("9780679783275"));
        catalog.checkin("9780679783275");
        assertTrue(catalog.remove("9780679783275"));
        assertEquals(3, catalog.size());
        assertFalse(catalog.remove("9780679783275"));
        assertFalse(catalog.remove("0306406152"));
    }

    @Test
    void searchAllSortsByTitleIgnoringArticles() {
        assertEquals(List.of("Art Films", "The Art of Loops", "Branches", "A Catalog of Clouds"),
                titles(catalog.search(Catalog.Query.all())));
    }

    @Test
    void searchByTitleWordsIgnoresCase() {
        assertEquals(List.of("Art Films", "The Art of Loops"),
                titles(catalog.search(Catalog.Query.all().titleContains("ART"))));
        assertEquals(List.of(), titles(catalog.search(Catalog.Query.all().titleContains("zebra"))));
    }

    @Test
    void searchByAuthor() {
        assertEquals(List.of("The Art of Loops", "Branches"),
                titles(catalog.search(Catalog.Query.all().byAuthor(" ada lane "))));
    }

    @Test
    void searchByInclusiveYearRange() {
        assertEquals(List.of("Branches", "A Catalog of Clouds"),
                titles(catalog.search(Catalog.Query.all().yearBetween(2010, 2010))));
        assertEquals(List.of("Art Films", "Branches", "A Catalog of Clouds"),
                titles(catalog.search(Catalog.Query.all().yearBetween(2000, 2021))));
        assertEquals(List.of("The Art of Loops"),
                titles(catalog.search(Catalog.Query.all().yearBetween(1999, 2009))));
        assertThrows(IllegalArgumentException.class, () -> Catalog.Query.all().yearBetween(2011, 2010));
    }

    @Test
    void searchAvailableOnly() {
        catalog.checkout("080442957X");
        catalog.checkout("9780306406157");
        assertEquals(List.of("Art Films", "The Art of Loops", "A Catalog of Clouds"),
                titles(catalog.search(Catalog.Query.all().availableOnly())));
    }

    @Test
    void searchByCategoryComparesText() {
        String category = String.valueOf(new char[] {'b', 'o', 'o', 'k'});
        assertEquals(List.of("The Art of Loops", "Branches"),
                titles(catalog.search(Catalog.Query.all().inCategory(category))));
    }

    @Test
    void equalTitlesSortNewestFirst() {
        catalog.add(new Book("9780553382563", "Branches", "Di Park", 2015, 1, "book"));
        List<Book> hits = catalog.search(Catalog.Query.all().titleContains("branch"));
        assertEquals(2015, hits.get(0).year());
        assertEquals(2010, hits.get(1).year());
    }

    @Test
    void titlesByAuthorCounts() {
        Map<String, Integer> counts = catalog.titlesByAuthor();
        assertEquals(List.of("Ada Lane", "Bo Reyes", "Cy Moss"), new ArrayList<>(counts.keySet()));
        assertEquals(2, counts.get("Ada Lane"));
        assertEquals(1, counts.get("Cy Moss"));
    }
}
