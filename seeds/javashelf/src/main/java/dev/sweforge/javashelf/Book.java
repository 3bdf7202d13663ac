package dev.sweforge.javashelf;

import java.util.Objects;

/** A title in the catalog: identified by its ISBN, with a number of copies on the shelf. */
public final class Book {
    private final String isbn;
    private final String title;
    private final String author;
    private final int year;
    private final int copies;
    private final String category;

    public Book(String isbn, String title, String author, int year, int copies, String category) {
        if (!Isbn.isValid(isbn)) {
            throw new IllegalArgumentException("invalid ISBN: " + isbn);
        }
        if (title == null || title.isBlank()) {
            throw new IllegalArgumentException("title is required");
        }
        if (copies < 1) {
            throw new IllegalArgumentException("at least one copy is required");
        }
        this.isbn = Isbn.normalize(isbn);
        this.title = title.trim();
        this.author = author == null ? "" : author.trim();
        this.year = year;
        this.copies = copies;
        this.category = category;
    }

    public String isbn() {
        return isbn;
    }

    public String title() {
        return title;
    }

    public String author() {
        return author;
    }

    public int year() {
        return year;
    }

    public int copies() {
        return copies;
    }

    public String category() {
        return category;
    }

    @Override
    public boolean equals(Object other) {
        if (this == other) {
            return true;
        }
        if (!(other instanceof Book)) {
            return false;
        }
        return isbn.equals(((Book) other).isbn);
    }

    @Override
    public int hashCode() {
        return Objects.hash(isbn);
    }

    @Override
    public String toString() {
        return title + " (" + author + ", " + year + ")";
    }
}
