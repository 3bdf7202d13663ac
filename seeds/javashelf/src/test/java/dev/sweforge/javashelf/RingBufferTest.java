package dev.sweforge.javashelf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class RingBufferTest {
    @Test
    void capacityMustBePositive() {
        assertThrows(IllegalArgumentException.class, () -> new RingBuffer<String>(0));
        assertThrows(IllegalArgumentException.class, () -> new RingBuffer<String>(-3));
        assertEquals(1, new RingBuffer<String>(1).capacity());
    }

    @Test
    void fillsUpInOrder() {
        RingBuffer<String> ring = new RingBuffer<>(3);
        assertTrue(ring.isEmpty());
        assertNull(ring.push("a"));
        assertNull(ring.push("b"));
        assertFalse(ring.isFull());
        assertNull(ring.push("c"));
        assertTrue(ring.isFull());
        assertFalse(ring.isEmpty());
        assertEquals(3, ring.size());
        assertEquals(List.of("a", "b", "c"), ring.toList());
    }

    @Test
    void pushingWhenFullEvictsTheOldest() {
        RingBuffer<String> ring = new RingBuffer<>(3);
        for (String s : List.of("a", "b", "c")) {
            ring.push(s);
        }
        assertEquals("a", ring.push("d"));
        assertEquals("b", ring.push("e"));
        assertEquals(List.of("c", "d", "e"), ring.toList());
        assertEquals(3, ring.size());
        assertEquals("e", ring.latest());
    }

    @Test
    void getChecksBounds() {
        RingBuffer<Integer> ring = new RingBuffer<>(4);
        ring.push(10);
        ring.push(20);
        assertEquals(10, ring.get(0));
        assertEquals(20, ring.get(1));
        assertThrows(IndexOutOfBoundsException.class, () -> ring.get(2));
        assertThrows(IndexOutOfBoundsException.class, () -> ring.get(-1));
    }

    @Test
    void pollRemovesTheOldest() {
        RingBuffer<Integer> ring = new RingBuffer<>(2);
        ring.push(1);
        ring.push(2);
        ring.push(3);
        assertEquals(2, ring.poll());
        assertEquals(1, ring.size());
        ring.push(4);
        ring.push(5);
        assertEquals(List.of(4, 5), ring.toList());
        assertEquals(4, ring.poll());
        assertEquals(5, ring.poll());
        assertThrows(IllegalStateException.class, ring::poll);
    }

    @Test
    void latestOfEmptyIsAnError() {
        RingBuffer<String> ring = new RingBuffer<>(2);
        assertThrows(IllegalStateException.class, ring::latest);
        ring.push("x");
        assertEquals("x", ring.latest());
    }

    @Test
    void nullItemsAreRejected() {
        RingBuffer<String> ring = new RingBuffer<>(2);
        assertThrows(NullPointerException.class, () -> ring.push(null));
        assertEquals(0, ring.size());
    }

    @Test
    void clearEmptiesAndResets() {
        RingBuffer<String> ring = new RingBuffer<>(2);
        ring.push("a");
        ring.push("b");
        ring.push("c");
        ring.clear();
        assertEquals(0, ring.size());
        assertEquals(List.of(), ring.toList());
        ring.push("z");
        assertEquals(List.of("z"), ring.toList());
    }
}
