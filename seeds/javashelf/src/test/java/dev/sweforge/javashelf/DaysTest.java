package dev.sweforge.javashelf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class DaysTest {
    @Test
    void leapYearRules() {
        assertTrue(Days.isLeapYear(2000));
        assertTrue(Days.isLeapYear(2024));
        assertFalse(Days.isLeapYear(2023));
        assertFalse(Days.isLeapYear(2100));
        assertFalse(Days.isLeapYear(1900));
        assertTrue(Days.isLeapYear(1600));
    }

    @Test
    void daysInEachMonth() {
        int[] expected = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
        for (int m = 1; m <= 12; m++) {
            assertEquals(expected[m - 1], Days.daysInMonth(2023, m), "month " + m);
        }
        assertEquals(29, Days.daysInMonth(2024, 2));
    }

    @Test
    void monthOutOfRangeIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> Days.daysInMonth(2023, 0));
        assertThrows(IllegalArgumentException.class, () -> Days.daysInMonth(2023, 13));
    }

    @Test
    void dayNumbersCountFromTheMillennium() {
        assertEquals(0, Days.toDayNumber(2000, 1, 1));
        assertEquals(31, Days.toDayNumber(2000, 2, 1));
        assertEquals(60, Days.toDayNumber(2000, 3, 1));
        assertEquals(366, Days.toDayNumber(2001, 1, 1));
        assertEquals(8766, Days.toDayNumber(2024, 1, 1));
        assertEquals(36524, Days.toDayNumber(2099, 12, 31));
    }

    @Test
    void dayNumberRejectsImpossibleDates() {
        assertThrows(IllegalArgumentException.class, () -> Days.toDayNumber(1999, 12, 31));
        assertThrows(IllegalArgumentException.class, () -> Days.toDayNumber(2100, 1, 1));
        assertThrows(IllegalArgumentException.class, () -> Days.toDayNumber(2023, 2, 29));
        assertThrows(IllegalArgumentException.class, () -> Days.toDayNumber(2023, 4, 0));
        assertEquals(Days.toDayNumber(2024, 3, 1) - 1, Days.toDayNumber(2024, 2, 29));
    }

    @Test
    void parsesIsoDates() {
        assertEquals(8766, Days.parse("2024-01-01"));
        assertEquals(8766, Days.parse(" 2024-01-01 "));
        assertThrows(IllegalArgumentException.class, () -> Days.parse("2024-1-01"));
        assertThrows(IllegalArgumentException.class, () -> Days.parse("2024-01"));
        assertThrows(IllegalArgumentException.class, () -> Days.parse("20x4-01-01"));
        assertThrows(IllegalArgumentException.class, () -> Days.parse("2024-01-001"));
    }

    @Test
    void formatsDayNumbers() {
        assertEquals("2000-01-01", Days.format(0));
        assertEquals("2000-02-29", Days.format(59));
        assertEquals("2000-12-31", Days.format(365));
        assertEquals("2001-01-01", Days.format(366));
        assertEquals("2024-01-01", Days.format(8766));
        assertEquals("2099-12-31", Days.format(36524));
    }

    @Test
    void formatRejectsOutOfRange() {
        assertThrows(IllegalArgumentException.class, () -> Days.format(-1));
        assertThrows(IllegalArgumentException.class, () -> Days.format(36525));
    }

    @Test
    void formatAndParseRoundTrip() {
        for (int day = 0; day < 800; day += 7) {
            assertEquals(day, Days.parse(Days.format(day)));
        }
    }

    @Test
    void weekdaysAndWeekends() {
        assertEquals(6, Days.weekday(0));
        assertEquals(7, Days.weekday(1));
        assertEquals(1, Days.weekday(2));
        assertEquals(1, Days.weekday(8766));
        assertEquals(5, Days.weekday(8770));
        assertTrue(Days.isWeekend(0));
        assertTrue(Days.isWeekend(1));
        assertFalse(Days.isWeekend(2));
        assertFalse(Days.isWeekend(8770));
    }
}
