package dev.sweforge.javashelf;

import java.util.ArrayList;
import java.util.List;

/** Closed ranges of day numbers (closures, holidays, bookings): merging, totals and gaps. */
public final class Intervals {
    private Intervals() {
    }

    /** The days {@code start..end}, both inclusive. */
    public static final class Range {
        private final int start;
        private final int end;

        public Range(int start, int end) {
            if (start > end) {
                throw new IllegalArgumentException("range ends before it starts: " + start + ".." + end);
            }
            this.start = start;
            this.end = end;
        }

        public int start() {
            return start;
        }

        public int end() {
            return end;
        }

        public int length() {
            return end - start + 1;
        }

        public boolean contains(int day) {
            return day >= start && day <= end;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Range && ((Range) o).start == start && ((Range) o).end == end;
        }

        @Override
        public int hashCode() {
            return 31 * start + end;
        }

        @Override
        public String toString() {
            return start + ".." + end;
        }
    }

    /** Sorted, disjoint ranges covering the same days; touching ranges (3..5, 6..8) are joined. */
    public static List<Range> merge(List<Range> ranges) {
        List<Range> sorted = new ArrayList<>(ranges);
        sorted.sort((a, b) -> a.start != b.start ? Integer.compare(a.start, b.start)
                : Integer.compare(a.end, b.end));
        List<Range> merged = new ArrayList<>();
        for (Range r : sorted) {
            if (merged.isEmpty()) {
                merged.add(r);
                continue;
            }
            Range last = merged.get(merged.size() - 1);
            if (r.start <= last.end + 1) {
                merged.set(merged.size() - 1, new Range(last.start, Math.max(last.end, r.end)));
            } else {
                merged.add(r);
            }
        }
        return merged;
    }

    /** Number of distinct days covered. */
    public static int totalDays(List<Range> ranges) {
        int total = 0;
        for (Range r : merge(ranges)) {
            total += r.length();
        }
        return total;
    }

    /** The days of {@code window} that no range covers, as ranges. */
    public static List<Range> gaps(List<Range> ranges, Range window) {
        List<Range> gaps = new ArrayList<>();
        int next = window.start;
        for (Range r : merge(ranges)) {
            if (r.end < next) {
                continue;
            }
            if (r.start > window.end) {
                break;
            }
            if (r.start > next) {
                gaps.add(new Range(next, r.start - 1));
            }
            next = r.end + 1;
        }
        if (next <= window.end) {
            gaps.add(new Range(next, window.end));
        }
        return gaps;
    }

    /** Whether any range covers the day (binary search over the merged ranges). */
    public static boolean covers(List<Range> ranges, int day) {
        List<Range> merged = merge(ranges);
        int lo = 0;
        int hi = merged.size() - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            Range r = merged.get(mid);
            if (day < r.start) {
                hi = mid - 1;
            } else if (day > r.end) {
                lo = mid + 1;
            } else {
                return true;
            }
        }
        return false;
    }

    /** Counts the working days (Monday to Friday) in a range that no closure covers. */
    public static int openWeekdays(Range period, List<Range> closures) {
        int count = 0;
        for (int day = period.start; day <= period.end; day++) {
            if (!Days.isWeekend(day) && !covers(closures, day)) {
                count++;
            }
        }
        return count;
    }
}
