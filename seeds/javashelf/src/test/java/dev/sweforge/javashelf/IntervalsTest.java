package dev.sweforge.javashelf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sweforge.javashelf.Intervals.Range;
import java.util.List;
import org.junit.jupiter.api.Test;

class IntervalsTest {
    private static Range r(int start, int end) {
        return new Range(start, end);
    }

    @Test
    void rangeBasics() {
        assertThrows(IllegalArgumentException.class, () -> r(5, 4));
        assertEquals(1, r(4, 4).length());
        assertEquals(3, r(4, 6).length());
        assertTrue(r(4, 6).contains(4));
        assertTrue(r(4, 6).contains(6));
        assertFalse(r(4, 6).contains(7));
        assertFalse(r(4, 6).contains(3));
        assertEquals("4..6", r(4, 6).toString());
        assertEquals(r(1, 2), r(1, 2));
        assertNotEquals(r(1, 2), r(1, 3));
        assertNotEquals(r(1, 2), r(0, 2));
        assertEquals(r(1, 2).hashCode(), r(1, 2).hashCode());
    }

    @Test
    void mergeJoinsOverlappingAndTouching() {
        assertEquals(List.of(r(1, 8)), Intervals.merge(List.of(r(6, 8), r(1, 3), r(3, 5))));
        assertEquals(List.of(r(1, 3), r(5, 8)), Intervals.merge(List.of(r(5, 8), r(1, 3))));
        assertEquals(List.of(r(1, 10)), Intervals.merge(List.of(r(1, 10), r(2, 4))));
        assertEquals(List.of(), Intervals.merge(List.of()));
    }

    @Test
    void totalDaysCountsEachDayOnce() {
        assertEquals(8, Intervals.totalDays(List.of(r(1, 5), r(3, 8))));
        assertEquals(7, Intervals.totalDays(List.of(r(1, 3), r(10, 13))));
        assertEquals(0, Intervals.totalDays(List.of()));
    }

    @Test
    void gapsInsideAWindow() {
        assertEquals(List.of(r(0, 0), r(4, 9), r(16, 20)),
                Intervals.gaps(List.of(r(1, 3), r(10, 15)), r(0, 20)));
        assertEquals(List.of(r(5, 9)), Intervals.gaps(List.of(r(0, 4), r(10, 30)), r(5, 12)));
        assertEquals(List.of(), Intervals.gaps(List.of(r(0, 30)), r(5, 12)));
        assertEquals(List.of(r(5, 12)), Intervals.gaps(List.of(r(0, 3), r(20, 30)), r(5, 12)));
        assertEquals(List.of(r(5, 5)), Intervals.gaps(List.of(r(6, 12)), r(5, 12)));
    }

    @Test
    void coversUsesMergedRanges() {
        List<Range> closures = List.of(r(10, 12), r(1, 3), r(20, 20), r(13, 14));
        assertTrue(Intervals.covers(closures, 1));
        assertTrue(Intervals.covers(closures, 14));
        assertTrue(Intervals.covers(closures, 20));
        assertFalse(Intervals.covers(closures, 0));
        assertFalse(Intervals.covers(closures, 4));
        assertFalse(Intervals.covers(closures, 15));
        assertFalse(Intervals.covers(closures, 21));
        assertFalse(Intervals.covers(List.of(), 1));
    }

    @Test
    void openWeekdaysSkipWeekendsAndClosures() {
        // Day 2 is Monday 2000-01-03; days 2..15 are two full weeks.
        assertEquals(10, Intervals.openWeekdays(r(2, 15), List.of()));
        assertEquals(7, Intervals.openWeekdays(r(2, 15), List.of(r(3, 5))));
        assertEquals(0, Intervals.openWeekdays(r(0, 1), List.of()));
        assertEquals(1, Intervals.openWeekdays(r(6, 6), List.of()));
    }
}
