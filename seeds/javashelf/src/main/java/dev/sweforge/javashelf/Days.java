package dev.sweforge.javashelf;

/**
 * Calendar dates as day numbers: day 0 is 2000-01-01, and every later day counts one up.
 * Supports the years 2000 to 2099.
 */
public final class Days {
    public static final int FIRST_YEAR = 2000;
    public static final int LAST_YEAR = 2099;

    private Days() {
    }

    /** Gregorian leap year rule. */
    public static boolean isLeapYear(int year) {
        if (year % 400 == 0) {
            return true;
        }
        if (year % 100 == 0) {
            return false;
        }
        return year % 4 == 0;
    }

    /** Number of days in a month (1-12) of a year. */
    public static int daysInMonth(int year, int month) {
        switch (month) {
            case 2:
                return isLeapYear(year) ? 29 : 28;
            case 4:
            case 6:
            case 9:
            case 11:
                return 30;
            default:
                if (month < 1 || month > 12) {
                    throw new IllegalArgumentException("month out of range: " + month);
                }
                return 31;
        }
    }

    /** The day number of a date. */
    public static int toDayNumber(int year, int month, int day) {
        if (year < FIRST_YEAR || year > LAST_YEAR) {
            throw new IllegalArgumentException("year out of range: " + year);
        }
        if (day < 1 || day > daysInMonth(year, month)) {
            throw new IllegalArgumentException("day out of range: " + year + "-" + month + "-" + day);
        }
        int total = 0;
        for (int y = FIRST_YEAR; y < year; y++) {
            total += isLeapYear(y) ? 366 : 365;
        }
        for (int m = 1; m < month; m++) {
            total += daysInMonth(year, m);
        }
        return total + day - 1;
    }

    /** Parses {@code YYYY-MM-DD} into a day number. */
    public static int parse(String text) {
        String[] parts = text.trim().split("-");
        if (parts.length != 3 || parts[0].length() != 4 || parts[1].length() != 2 || parts[2].length() != 2) {
            throw new IllegalArgumentException("expected YYYY-MM-DD: " + text);
        }
        try {
            return toDayNumber(Integer.parseInt(parts[0]), Integer.parseInt(parts[1]),
                    Integer.parseInt(parts[2]));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("expected YYYY-MM-DD: " + text, e);
        }
    }

    /** Formats a day number as {@code YYYY-MM-DD}. */
    public static String format(int dayNumber) {
        if (dayNumber < 0) {
            throw new IllegalArgumentException("day number before 2000-01-01: " + dayNumber);
        }
        int year = FIRST_YEAR;
        int rest = dayNumber;
        while (rest >= (isLeapYear(year) ? 366 : 365)) {
            rest -= isLeapYear(year) ? 366 : 365;
            year++;
        }
        if (year > LAST_YEAR) {
            throw new IllegalArgumentException("day number after 2099-12-31: " + dayNumber);
        }
        int month = 1;
        while (rest >= daysInMonth(year, month)) {
            rest -= daysInMonth(year, month);
            month++;
        }
        return String.format("%04d-%02d-%02d", year, month, rest + 1);
    }

    /** Day of the week, 1 = Monday ... 7 = Sunday (2000-01-01 was a Saturday). */
    public static int weekday(int dayNumber) {
        return (dayNumber + 5) % 7 + 1;
    }

    /** Whether a day number falls on a Saturday or a Sunday. */
    public static boolean isWeekend(int dayNumber) {
        return weekday(dayNumber) >= 6;
    }
}
