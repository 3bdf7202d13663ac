package dev.sweforge.javashelf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class LoanTest {
    private static final String ISBN = "9780306406157";

    @Test
    void loanPeriodsPerCategory() {
        assertEquals(21, Loan.loanDays("book"));
        assertEquals(7, Loan.loanDays("DVD"));
        assertEquals(14, Loan.loanDays(" Magazine "));
    }

    @Test
    void referenceAndUnknownCategoriesCannotBeLent() {
        IllegalArgumentException ref = assertThrows(IllegalArgumentException.class, () -> Loan.loanDays("reference"));
        assertEquals("reference items cannot be borrowed", ref.getMessage());
        IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class, () -> Loan.loanDays("vinyl"));
        assertEquals("unknown category: vinyl", unknown.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new Loan(ISBN, "ana", "reference", 0));
    }

    @Test
    void dailyRates() {
        assertEquals(100, Loan.dailyRateCents("Dvd"));
        assertEquals(10, Loan.dailyRateCents("MAGAZINE"));
        assertEquals(25, Loan.dailyRateCents("book"));
    }

    @Test
    void constructorValidatesMemberAndDay() {
        assertThrows(IllegalArgumentException.class, () -> new Loan(ISBN, " ", "book", 0));
        assertThrows(IllegalArgumentException.class, () -> new Loan(ISBN, null, "book", 0));
        assertThrows(IllegalArgumentException.class, () -> new Loan(ISBN, "ana", "book", -1));
        Loan loan = new Loan(ISBN, " ana ", " BOOK", 0);
        assertEquals("ana", loan.member());
        assertEquals("book", loan.category());
        assertEquals(0, loan.borrowedDay());
        assertEquals(ISBN, loan.isbn());
    }

    @Test
    void dueDayAddsTheLoanPeriod() {
        assertEquals(121, new Loan(ISBN, "ana", "book", 100).dueDay());
        assertEquals(107, new Loan(ISBN, "ana", "dvd", 100).dueDay());
    }

    @Test
    void renewingExtendsByOnePeriod() {
        Loan loan = new Loan(ISBN, "ana", "dvd", 100);
        loan.renew(107);
        assertEquals(1, loan.renewals());
        assertEquals(114, loan.dueDay());
        loan.renew(100);
        assertEquals(121, loan.dueDay());
    }

    @Test
    void renewalLimitIsEnforced() {
        Loan loan = new Loan(ISBN, "ana", "book", 0);
        loan.renew(1);
        loan.renew(2);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> loan.renew(3));
        assertEquals("renewal limit of 2 reached", e.getMessage());
        assertEquals(2, loan.renewals());
    }

    @Test
    void overdueLoansCannotBeRenewed() {
        Loan loan = new Loan(ISBN, "ana", "dvd", 0);
        assertThrows(IllegalStateException.class, () -> loan.renew(8));
        assertEquals(0, loan.renewals());
    }

    @Test
    void returnedLoansCannotBeRenewedOrReturnedAgain() {
        Loan loan = new Loan(ISBN, "ana", "book", 10);
        assertFalse(loan.isReturned());
        assertThrows(IllegalArgumentException.class, () -> loan.giveBack(9));
        loan.giveBack(10);
        assertTrue(loan.isReturned());
        assertThrows(IllegalStateException.class, () -> loan.renew(11));
        assertThrows(IllegalStateException.class, () -> loan.giveBack(12));
    }

    @Test
    void overdueDaysCountFromTheDueDay() {
        Loan loan = new Loan(ISBN, "ana", "dvd", 0);
        assertEquals(0, loan.overdueDays(0));
        assertEquals(0, loan.overdueDays(7));
        assertEquals(1, loan.overdueDays(8));
        assertEquals(10, loan.overdueDays(17));
    }

    @Test
    void overdueDaysStopAtTheReturnDay() {
        Loan loan = new Loan(ISBN, "ana", "dvd", 0);
        loan.giveBack(10);
        assertEquals(3, loan.overdueDays(50));
    }

    @Test
    void finesStartAfterTheGracePeriod() {
        Loan loan = new Loan(ISBN, "ana", "book", 0);
        assertEquals(0, loan.fineCents(21));
        assertEquals(0, loan.fineCents(23));
        assertEquals(25, loan.fineCents(24));
        assertEquals(250, loan.fineCents(33));
    }

    @Test
    void finesAreCappedPerCategory() {
        Loan book = new Loan(ISBN, "ana", "book", 0);
        assertEquals(2000, book.fineCents(21 + 2 + 80));
        assertEquals(1975, book.fineCents(21 + 2 + 79));
        assertEquals(2000, book.fineCents(21 + 2 + 500));
        Loan dvd = new Loan(ISBN, "ana", "DVD", 0);
        assertEquals(2900, dvd.fineCents(7 + 2 + 29));
        assertEquals(3000, dvd.fineCents(7 + 2 + 30));
        assertEquals(3000, dvd.fineCents(7 + 2 + 31));
        Loan magazine = new Loan(ISBN, "ana", "magazine", 0);
        assertEquals(100, magazine.fineCents(14 + 2 + 10));
    }
}
