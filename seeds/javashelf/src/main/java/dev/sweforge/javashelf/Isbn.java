package dev.sweforge.javashelf;

/** ISBN-10 and ISBN-13 numbers: normalisation, check digits, validation and conversion. */
public final class Isbn {
    private Isbn() {
    }

    /**
     * Drops hyphens and spaces and upper-cases a final {@code x}.
     *
     * @throws IllegalArgumentException on null or on any other character
     */
    public static String normalize(String raw) {
        if (raw == null) {
            throw new IllegalArgumentException("isbn is null");
        }
        StringBuilder out = new StringBuilder(raw.length());
        for (int i = 0; i < raw.length(); i++) {
            char c = raw.charAt(i);
            if (c == '-' || c == ' ') {
                continue;
            }
            if (c >= '0' && c <= '9') {
                out.append(c);
            } else if ((c == 'x' || c == 'X') && i == raw.length() - 1) {
                out.append('X');
            } else {
                throw new IllegalArgumentException("invalid character '" + c + "' at index " + i);
            }
        }
        return out.toString();
    }

    /** The check digit of an ISBN-10 from its first nine digits; 10 stands for 'X'. */
    public static int checkDigit10(String firstNine) {
        requireDigits(firstNine, 9);
        int sum = 0;
        for (int i = 0; i < 9; i++) {
            sum += (10 - i) * (firstNine.charAt(i) - '0');
        }
        return (11 - sum % 11) % 11;
    }

    /** The check digit of an ISBN-13 from its first twelve digits. */
    public static int checkDigit13(String firstTwelve) {
        requireDigits(firstTwelve, 12);
        int sum = 0;
        for (int i = 0; i < 12; i++) {
            int digit = firstTwelve.charAt(i) - '0';
            sum += i % 2 == 0 ? digit : 3 * digit;
        }
        return (10 - sum % 10) % 10;
    }

    /** Whether the text is a well-formed ISBN-10 with a correct check digit. */
    public static boolean isValid10(String raw) {
        String s = normalizeOrNull(raw);
        if (s == null || s.length() != 10 || !allDigits(s.substring(0, 9))) {
            return false;
        }
        char last = s.charAt(9);
        int expected = checkDigit10(s.substring(0, 9));
        int actual = last == 'X' ? 10 : last - '0';
        return expected == actual;
    }

    /** Whether the text is a well-formed ISBN-13 (prefix 978 or 979) with a correct check digit. */
    public static boolean isValid13(String raw) {
        String s = normalizeOrNull(raw);
        if (s == null || s.length() != 13 || !allDigits(s)) {
            return false;
        }
        String prefix = s.substring(0, 3);
        if (!prefix.equals("978") && !prefix.equals("979")) {
            return false;
        }
        return checkDigit13(s.substring(0, 12)) == s.charAt(12) - '0';
    }

    /** Whether the text is a valid ISBN of either length. */
    public static boolean isValid(String raw) {
        return isValid10(raw) || isValid13(raw);
    }

    /** Converts a valid ISBN-10 to its ISBN-13 (prefix 978). */
    public static String toIsbn13(String isbn10) {
        if (!isValid10(isbn10)) {
            throw new IllegalArgumentException("not a valid ISBN-10: " + isbn10);
        }
        String body = "978" + normalize(isbn10).substring(0, 9);
        return body + checkDigit13(body);
    }

    /** Converts a valid ISBN-13 with prefix 978 back to an ISBN-10. */
    public static String toIsbn10(String isbn13) {
        if (!isValid13(isbn13)) {
            throw new IllegalArgumentException("not a valid ISBN-13: " + isbn13);
        }
        String s = normalize(isbn13);
        if (!s.substring(0, 3).equals("978")) {
            throw new IllegalArgumentException("only 978 numbers have an ISBN-10: " + isbn13);
        }
        String body = s.substring(3, 12);
        int check = checkDigit10(body);
        return body + (check == 10 ? "X" : String.valueOf(check));
    }

    /** A valid ISBN-13 written as prefix-body-check, e.g. {@code 978-030640615-7}. */
    public static String format13(String isbn13) {
        if (!isValid13(isbn13)) {
            throw new IllegalArgumentException("not a valid ISBN-13: " + isbn13);
        }
        String s = normalize(isbn13);
        return s.substring(0, 3) + "-" + s.substring(3, 12) + "-" + s.charAt(12);
    }

    private static String normalizeOrNull(String raw) {
        try {
            return normalize(raw);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    private static boolean allDigits(String s) {
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) < '0' || s.charAt(i) > '9') {
                return false;
            }
        }
        return true;
    }

    private static void requireDigits(String s, int length) {
        if (s == null || s.length() != length || !allDigits(s)) {
            throw new IllegalArgumentException("expected " + length + " digits: " + s);
        }
    }
}
