package dev.sweforge.javashelf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CsvReaderTest {
    private final CsvReader csv = new CsvReader();

    @Test
    void splitsAndTrimsPlainFields() {
        assertEquals(List.of("a", "b c", "d"), csv.parseLine(" a , b c ,d"));
        assertEquals(List.of("", "", ""), csv.parseLine(",,"));
        assertEquals(List.of(""), csv.parseLine(""));
    }

    @Test
    void quotedFieldsKeepSeparatorsAndSpaces() {
        assertEquals(List.of("x, y", " z "), csv.parseLine("\"x, y\",\" z \""));
        assertEquals(List.of("a", "b"), csv.parseLine("  \"a\",b"));
    }

    @Test
    void doubledQuotesInsideQuotes() {
        assertEquals(List.of("say \"hi\"", "end"), csv.parseLine("\"say \"\"hi\"\"\",end"));
        assertEquals(List.of("\""), csv.parseLine("\"\"\"\""));
    }

    @Test
    void quoteInsideAPlainFieldIsLiteral() {
        assertEquals(List.of("5\" disk", "x"), csv.parseLine("5\" disk,x"));
    }

    @Test
    void unterminatedQuoteIsAnError() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> csv.parseLine("a,\"b"));
        assertEquals("unterminated quote in: a,\"b", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> csv.parseLine("\"a\"\""));
    }

    @Test
    void otherSeparators() {
        assertEquals(List.of("a", "b,c"), new CsvReader(';').parseLine("a;b,c"));
        assertThrows(IllegalArgumentException.class, () -> new CsvReader('"'));
        assertThrows(IllegalArgumentException.class, () -> new CsvReader('\n'));
    }

    @Test
    void recordsUseTheHeaderAndSkipCommentsAndBlanks() {
        String text = "# books\nid,name\n\n1,one\r\n  # aside\n2,\"t,wo\"\n";
        List<Map<String, String>> records = csv.parseRecords(text);
        assertEquals(2, records.size());
        assertEquals("1", records.get(0).get("id"));
        assertEquals("one", records.get(0).get("name"));
        assertEquals("t,wo", records.get(1).get("name"));
        assertEquals(List.of("id", "name"), List.copyOf(records.get(1).keySet()));
    }

    @Test
    void recordWithWrongFieldCountNamesTheLine() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> csv.parseRecords("a,b\n1,2\n\n3\n"));
        assertEquals("line 4: expected 2 fields, found 1", e.getMessage());
    }

    @Test
    void emptyTextHasNoRecords() {
        assertEquals(List.of(), csv.parseRecords(""));
        assertEquals(List.of(), csv.parseRecords("only,header\n"));
    }

    @Test
    void readsBooks() {
        String text = "isbn,title,author,year,copies,category\n"
                + "0-306-40615-2,\"Loops, Again\",Ada Lane,2001,3,dvd\n"
                + "080442957X,Branches,,2010,,book\n";
        List<Book> books = csv.readBooks(text);
        assertEquals(2, books.size());
        assertEquals("Loops, Again", books.get(0).title());
        assertEquals(3, books.get(0).copies());
        assertEquals("dvd", books.get(0).category());
        assertEquals(2001, books.get(0).year());
        assertEquals(1, books.get(1).copies());
        assertEquals("", books.get(1).author());
    }

    @Test
    void readBooksDefaultsTheCategory() {
        List<Book> books = csv.readBooks("isbn,title,year\n0306406152,T,2000\n");
        assertEquals("book", books.get(0).category());
        assertEquals(1, books.get(0).copies());
    }

    @Test
    void readBooksReportsBadRecords() {
        IllegalArgumentException missing = assertThrows(IllegalArgumentException.class,
                () -> csv.readBooks("isbn,title,year\n0306406152,T,2000\n080442957X,,2001\n"));
        assertEquals("record 2: missing title", missing.getMessage());
        IllegalArgumentException notNumber = assertThrows(IllegalArgumentException.class,
                () -> csv.readBooks("isbn,title,year\n0306406152,T,20x0\n"));
        assertEquals("record 1: year is not a number: 20x0", notNumber.getMessage());
    }
}
