package dev.sweforge.javashelf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class IsbnTest {
    @Test
    void normalizeDropsHyphensAndSpaces() {
        assertEquals("0306406152", Isbn.normalize("0-306 40615-2"));
        assertEquals("", Isbn.normalize(" - "));
    }

    @Test
    void normalizeUpperCasesOnlyAFinalX() {
        assertEquals("080442957X", Isbn.normalize("0-8044-2957-x"));
        assertThrows(IllegalArgumentException.class, () -> Isbn.normalize("08044X2957"));
    }

    @Test
    void normalizeRejectsLettersAndNull() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Isbn.normalize("12a4"));
        assertEquals("invalid character 'a' at index 2", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Isbn.normalize(null));
        assertThrows(IllegalArgumentException.class, () -> Isbn.normalize("12/4"));
        assertThrows(IllegalArgumentException.class, () -> Isbn.normalize("12:4"));
    }

    @Test
    void checkDigit10CoversZeroAndX() {
        assertEquals(2, Isbn.checkDigit10("030640615"));
        assertEquals(10, Isbn.checkDigit10("080442957"));
        assertEquals(0, Isbn.checkDigit10("000000000"));
        assertEquals(1, Isbn.checkDigit10("111111111"));
        assertEquals(9, Isbn.checkDigit10("999999999"));
    }

    @Test
    void checkDigit13WeightsAlternate() {
        assertEquals(7, Isbn.checkDigit13("978030640615"));
        assertEquals(3, Isbn.checkDigit13("978080442957"));
        assertEquals(2, Isbn.checkDigit13("978000000000"));
        assertEquals(1, Isbn.checkDigit13("979000000000"));
    }

    @Test
    void checkDigitsNeedExactlyTheRightDigits() {
        assertThrows(IllegalArgumentException.class, () -> Isbn.checkDigit10("03064061"));
        assertThrows(IllegalArgumentException.class, () -> Isbn.checkDigit10("0306406152"));
        assertThrows(IllegalArgumentException.class, () -> Isbn.checkDigit13("97803064061a"));
        assertThrows(IllegalArgumentException.class, () -> Isbn.checkDigit13(null));
    }

    @Test
    void validatesIsbn10() {
        assertTrue(Isbn.isValid10("0-306-40615-2"));
        assertTrue(Isbn.isValid10("0-8044-2957-X"));
        assertFalse(Isbn.isValid10("0-306-40615-3"));
        assertFalse(Isbn.isValid10("0-306-40615"));
        assertFalse(Isbn.isValid10("03064061522"));
        assertFalse(Isbn.isValid10("X306406152"));
        assertFalse(Isbn.isValid10("0306-oops"));
    }

    @Test
    void validatesIsbn13() {
        assertTrue(Isbn.isValid13("978-0-306-40615-7"));
        assertTrue(Isbn.isValid13("9790000000001"));
        assertFalse(Isbn.isValid13("978-0-306-40615-8"));
        assertFalse(Isbn.isValid13("9770306406157"));
        assertFalse(Isbn.isValid13("978030640615"));
        assertFalse(Isbn.isValid13("978030640615X"));
        assertFalse(Isbn.isValid13("0306406152"));
    }

    @Test
    void isValidAcceptsEitherLength() {
        assertTrue(Isbn.isValid("0306406152"));
        assertTrue(Isbn.isValid("9780306406157"));
        assertFalse(Isbn.isValid("12345"));
        assertFalse(Isbn.isValid(null));
    }

    @Test
    void convertsTenToThirteen() {
        assertEquals("9780306406157", Isbn.toIsbn13("0-306-40615-2"));
        assertEquals("9780804429573", Isbn.toIsbn13("080442957x"));
        assertThrows(IllegalArgumentException.class, () -> Isbn.toIsbn13("0306406153"));
    }

    @Test
    void convertsThirteenToTen() {
        assertEquals("0306406152", Isbn.toIsbn10("978-0-306-40615-7"));
        assertEquals("080442957X", Isbn.toIsbn10("9780804429573"));
        assertEquals("0000000000", Isbn.toIsbn10("9780000000002"));
        assertThrows(IllegalArgumentException.class, () -> Isbn.toIsbn10("9790000000001"));
        assertThrows(IllegalArgumentException.class, () -> Isbn.toIsbn10("9780306406158"));
    }

    @Test
    void formatsThirteen() {
        assertEquals("978-030640615-7", Isbn.format13("9780306406157"));
        assertThrows(IllegalArgumentException.class, () -> Isbn.format13("0306406152"));
    }
}
