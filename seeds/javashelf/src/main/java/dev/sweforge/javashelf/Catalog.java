package dev.sweforge.javashelf;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/** The books of a library, the copies out on loan, and search over both. */
public final class Catalog {
    private final Map<String, Book> books = new LinkedHashMap<>();
    private final Map<String, Integer> onLoan = new HashMap<>();

    /** Adds a book; its ISBN must not be in the catalog yet. */
    public void add(Book book) {
        if (books.containsKey(book.isbn())) {
            throw new IllegalArgumentException("duplicate ISBN: " + book.isbn());
        }
        books.put(book.isbn(), book);
        onLoan.put(book.isbn(), 0);
    }

    /** Removes a book with no copy out on loan; false when it is not in the catalog. */
    public boolean remove(String isbn) {
        String key = Isbn.normalize(isbn);
        if (!books.containsKey(key)) {
            return false;
        }
        if (onLoan.get(key) > 0) {
            throw new IllegalStateException("copies of " + key + " are out on loan");
        }
        books.remove(key);
        onLoan.remove(key);
        return true;
    }

    public int size() {
        return books.size();
    }

    public Book get(String isbn) {
        Book book = books.get(Isbn.normalize(isbn));
        if (book == null) {
            throw new IllegalArgumentException("not in the catalog: " + isbn);
        }
        return book;
    }

    /** Copies on the shelf now. */
    public int available(String isbn) {
        Book book = get(isbn);
        return book.copies() - onLoan.get(book.isbn());
    }

    /** Lends one copy out. */
    public void checkout(String isbn) {
        Book book = get(isbn);
        int out = onLoan.get(book.isbn());
        if (out >= book.copies()) {
            throw new IllegalStateException("no copy of " + book.isbn() + " is available");
        }
        onLoan.put(book.isbn(), out + 1);
    }

    /** Takes one copy back. */
    public void checkin(String isbn) {
        Book book = get(isbn);
        int out = onLoan.get(book.isbn());
        if (out == 0) {
            throw new IllegalStateException("no copy of " + book.isbn() + " is out on loan");
        }
        onLoan.put(book.isbn(), out - 1);
    }

    /** Books matching every filter of the query, by title, then by year (newest first). */
    public List<Book> search(Query query) {
        List<Book> hits = new ArrayList<>();
        for (Book book : books.values()) {
            if (query.matches(book, available(book.isbn()))) {
                hits.add(book);
            }
        }
        hits.sort(Comparator.comparing((Book b) -> TextUtil.sortKey(b.title()))
                .thenComparing(Book::year, Comparator.reverseOrder()));
        return hits;
    }

    /** Number of titles per author, authors in alphabetical order. */
    public Map<String, Integer> titlesByAuthor() {
        Map<String, Integer> counts = new TreeMap<>();
        for (Book book : books.values()) {
            counts.merge(book.author(), 1, Integer::sum);
        }
        return counts;
    }

    /** A search filter; every filter left unset matches all books. */
    public static final class Query {
        private String titleWords;
        private String author;
        private int minYear = Integer.MIN_VALUE;
        private int maxYear = Integer.MAX_VALUE;
        private boolean availableOnly;
        private String category;

        public static Query all() {
            return new Query();
        }

        /** Title contains the text, ignoring case. */
        public Query titleContains(String text) {
            this.titleWords = text.toLowerCase(Locale.ROOT);
            return this;
        }

        /** Author equals the name, ignoring case and surrounding spaces. */
        public Query byAuthor(String name) {
            this.author = name.trim();
            return this;
        }

        /** Published in {@code from..to}, both inclusive. */
        public Query yearBetween(int from, int to) {
            if (from > to) {
                throw new IllegalArgumentException("empty year range " + from + ".." + to);
            }
            this.minYear = from;
            this.maxYear = to;
            return this;
        }

        public Query availableOnly() {
            this.availableOnly = true;
            return this;
        }

        public Query inCategory(String category) {
            this.category = category;
            return this;
        }

        boolean matches(Book book, int available) {
            if (titleWords != null && !book.title().toLowerCase(Locale.ROOT).contains(titleWords)) {
                return false;
            }
            if (author != null && !book.author().equalsIgnoreCase(author)) {
                return false;
            }
            if (book.year() < minYear || book.year() > maxYear) {
                return false;
            }
            if (availableOnly && available <= 0) {
                return false;
            }
            return category == null || category.equals(book.category());
        }
    }
}
