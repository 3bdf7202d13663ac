package dev.sweforge.javashelf;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small reader for comma-separated records: double-quoted fields with {@code ""} escapes,
 * a header line, blank lines and {@code #} comment lines skipped.
 */
public final class CsvReader {
    private final char separator;

    public CsvReader(char separator) {
        if (separator == '"' || separator == '\n' || separator == '\r') {
            throw new IllegalArgumentException("unusable separator: " + separator);
        }
        this.separator = separator;
    }

    public CsvReader() {
        this(',');
    }

    /** Splits one line into fields; unquoted fields are trimmed, quoted ones kept verbatim. */
    public List<String> parseLine(String line) {
        List<String> fields = new ArrayList<>();
        StringBuilder field = new StringBuilder();
        boolean quoted = false;
        boolean wasQuoted = false;
        int i = 0;
        while (i < line.length()) {
            char c = line.charAt(i);
            if (quoted) {
                if (c == '"') {
                    if (i + 1 < line.length() && line.charAt(i + 1) == '"') {
                        field.append('"');
                        i++;
                    } else {
                        quoted = false;
                    }
                } else {
                    field.append(c);
                }
            } else if (c == separator) {
                fields.add(wasQuoted ? field.toString() : field.toString().trim());
                field.setLength(0);
                wasQuoted = false;
            } else if (c == '"' && field.toString().trim().isEmpty()) {
                field.setLength(0);
                quoted = true;
                wasQuoted = true;
            } else {
                field.append(c);
            }
            i++;
        }
        if (quoted) {
            throw new IllegalArgumentException("unterminated quote in: " + line);
        }
        fields.add(wasQuoted ? field.toString() : field.toString().trim());
        return fields;
    }

    /** Reads a header line and the records after it, as maps from column name to value. */
    public List<Map<String, String>> parseRecords(String text) {
        List<Map<String, String>> records = new ArrayList<>();
        List<String> header = null;
        String[] lines = text.split("\r?\n", -1);
        for (int n = 0; n < lines.length; n++) {
            String line = lines[n];
            if (line.isBlank() || line.trim().startsWith("#")) {
                continue;
            }
            List<String> fields = parseLine(line);
            if (header == null) {
                header = fields;
                continue;
            }
            if (fields.size() != header.size()) {
                throw new IllegalArgumentException("line " + (n + 1) + ": expected " + header.size()
                        + " fields, found " + fields.size());
            }
            Map<String, String> record = new LinkedHashMap<>();
            for (int k = 0; k < header.size(); k++) {
                record.put(header.get(k), fields.get(k));
            }
            records.add(record);
        }
        return records;
    }

    /** Reads books from records with the columns isbn, title, author, year, copies, category. */
    public List<Book> readBooks(String text) {
        List<Book> books = new ArrayList<>();
        int row = 0;
        for (Map<String, String> r : parseRecords(text)) {
            row++;
            String copies = r.getOrDefault("copies", "");
            books.add(new Book(require(r, "isbn", row), require(r, "title", row), r.get("author"),
                    toInt(require(r, "year", row), "year", row),
                    copies.isEmpty() ? 1 : toInt(copies, "copies", row),
                    r.getOrDefault("category", "book")));
        }
        return books;
    }

    private static String require(Map<String, String> record, String column, int row) {
        String value = record.get(column);
        if (value == null || value.isEmpty()) {
            throw new IllegalArgumentException("record " + row + ": missing " + column);
        }
        return value;
    }

    private static int toInt(String value, String column, int row) {
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("record " + row + ": " + column + " is not a number: " + value);
        }
    }
}
