package dev.sweforge.javashelf;

import java.util.Locale;

/** Text helpers for titles and names: slugs, shortening, sort keys and initials. */
public final class TextUtil {
    private static final String[] ARTICLES = {"the ", "a ", "an "};

    private TextUtil() {
    }

    /** Lower-case ASCII letters and digits, other runs of characters as one hyphen. */
    public static String slugify(String text) {
        StringBuilder out = new StringBuilder();
        boolean pendingHyphen = false;
        for (char c : text.toLowerCase(Locale.ROOT).toCharArray()) {
            if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
                if (pendingHyphen && out.length() > 0) {
                    out.append('-');
                }
                out.append(c);
                pendingHyphen = false;
            } else {
                pendingHyphen = true;
            }
        }
        return out.toString();
    }

    /** The text cut to at most {@code max} characters, ending in "..." when it was cut. */
    public static String truncate(String text, int max) {
        if (max < 4) {
            throw new IllegalArgumentException("max must be at least 4: " + max);
        }
        if (text.length() <= max) {
            return text;
        }
        return text.substring(0, max - 3).stripTrailing() + "...";
    }

    /** A title's sort key: lower case, without a leading English article. */
    public static String sortKey(String title) {
        String key = title.trim().toLowerCase(Locale.ROOT);
        for (String article : ARTICLES) {
            if (key.startsWith(article)) {
                return key.substring(article.length()).trim();
            }
        }
        return key;
    }

    /** Initials of a name: "ursula k. le guin" gives "U.K.L.G.". */
    public static String initials(String name) {
        StringBuilder out = new StringBuilder();
        for (String part : name.trim().split("[\\s.]+")) {
            if (!part.isEmpty()) {
                out.append(Character.toUpperCase(part.charAt(0))).append('.');
            }
        }
        return out.toString();
    }

    /** Counts the words of a text (runs of letters or digits). */
    public static int wordCount(String text) {
        int count = 0;
        boolean inWord = false;
        for (int i = 0; i < text.length(); i++) {
            boolean letter = Character.isLetterOrDigit(text.charAt(i));
            if (letter && !inWord) {
                count++;
            }
            inWord = letter;
        }
        return count;
    }
}
