package dev.sweforge.javashelf;

import java.util.Locale;

/** One item lent to a member: loan periods per category, renewals, overdue days and fines. */
public final class Loan {
    /** How many times a loan may be renewed. */
    public static final int MAX_RENEWALS = 2;
    /** Days after the due day that cost nothing. */
    public static final int GRACE_DAYS = 2;

    private final String isbn;
    private final String member;
    private final String category;
    private final int borrowedDay;
    private int renewals;
    private Integer returnedDay;

    public Loan(String isbn, String member, String category, int borrowedDay) {
        if (member == null || member.isBlank()) {
            throw new IllegalArgumentException("member is required");
        }
        if (borrowedDay < 0) {
            throw new IllegalArgumentException("borrowed day must not be negative: " + borrowedDay);
        }
        this.isbn = isbn;
        this.member = member.trim();
        this.category = category.trim().toLowerCase(Locale.ROOT);
        loanDays(this.category);
        this.borrowedDay = borrowedDay;
    }

    /** The loan period of a category, in days. */
    public static int loanDays(String category) {
        int days;
        switch (category.trim().toLowerCase(Locale.ROOT)) {
            case "book":
                days = 21;
                break;
            case "dvd":
                days = 7;
                break;
            case "magazine":
                days = 14;
                break;
            case "reference":
                throw new IllegalArgumentException("reference items cannot be borrowed");
            default:
                throw new IllegalArgumentException("unknown category: " + category);
        }
        return days;
    }

    /** The fine per chargeable day, in cents. */
    public static int dailyRateCents(String category) {
        String c = category.trim().toLowerCase(Locale.ROOT);
        if (c.equals("dvd")) {
            return 100;
        } else if (c.equals("magazine")) {
            return 10;
        }
        return 25;
    }

    public String isbn() {
        return isbn;
    }

    public String member() {
        return member;
    }

    public String category() {
        return category;
    }

    public int borrowedDay() {
        return borrowedDay;
    }

    public int renewals() {
        return renewals;
    }

    /** The last day the item may be kept without being overdue. */
    public int dueDay() {
        return borrowedDay + loanDays(category) * (renewals + 1);
    }

    /** Extends the loan by one period; not allowed once overdue, returned, or renewed too often. */
    public void renew(int today) {
        if (returnedDay != null) {
            throw new IllegalStateException("loan already returned");
        }
        if (renewals >= MAX_RENEWALS) {
            throw new IllegalStateException("renewal limit of " + MAX_RENEWALS + " reached");
        }
        if (today > dueDay()) {
            throw new IllegalStateException("overdue loans cannot be renewed");
        }
        renewals++;
    }

    /** Marks the item returned on a day, which must not precede the borrowing day. */
    public void giveBack(int day) {
        if (returnedDay != null) {
            throw new IllegalStateException("loan already returned");
        }
        if (day < borrowedDay) {
            throw new IllegalArgumentException("returned before it was borrowed");
        }
        returnedDay = day;
    }

    public boolean isReturned() {
        return returnedDay != null;
    }

    /** Days past the due day on {@code today} (or on the return day, once returned). */
    public int overdueDays(int today) {
        int end = returnedDay != null ? returnedDay : today;
        return Math.max(0, end - dueDay());
    }

    /** The fine in cents: nothing within the grace period, then a daily rate, capped. */
    public int fineCents(int today) {
        int overdue = overdueDays(today);
        if (overdue <= GRACE_DAYS) {
            return 0;
        }
        int fine = (overdue - GRACE_DAYS) * dailyRateCents(category);
        int cap = category.equals("dvd") ? 3000 : 2000;
        return Math.min(fine, cap);
    }
}
