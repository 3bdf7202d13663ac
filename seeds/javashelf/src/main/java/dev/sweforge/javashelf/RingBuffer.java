package dev.sweforge.javashelf;

import java.util.ArrayList;
import java.util.List;

/** A fixed-capacity buffer of the most recent items: when full, a push evicts the oldest. */
public final class RingBuffer<T> {
    private final Object[] items;
    private int head;
    private int size;

    public RingBuffer(int capacity) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity must be positive: " + capacity);
        }
        items = new Object[capacity];
    }

    public int capacity() {
        return items.length;
    }

    public int size() {
        return size;
    }

    public boolean isEmpty() {
        return size == 0;
    }

    public boolean isFull() {
        return size == items.length;
    }

    /** Appends an item; returns the item it evicted, or null when there was room. */
    @SuppressWarnings("unchecked")
    public T push(T item) {
        if (item == null) {
            throw new NullPointerException("null items are not stored");
        }
        T evicted = null;
        int tail = (head + size) % items.length;
        if (size == items.length) {
            evicted = (T) items[head];
            head = (head + 1) % items.length;
        } else {
            size++;
        }
        items[tail] = item;
        return evicted;
    }

    /** The item at a position, 0 being the oldest. */
    @SuppressWarnings("unchecked")
    public T get(int index) {
        if (index < 0 || index >= size) {
            throw new IndexOutOfBoundsException("index " + index + " of " + size);
        }
        return (T) items[(head + index) % items.length];
    }

    /** The newest item. */
    public T latest() {
        if (isEmpty()) {
            throw new IllegalStateException("buffer is empty");
        }
        return get(size - 1);
    }

    /** Removes and returns the oldest item. */
    @SuppressWarnings("unchecked")
    public T poll() {
        if (isEmpty()) {
            throw new IllegalStateException("buffer is empty");
        }
        T item = (T) items[head];
        items[head] = null;
        head = (head + 1) % items.length;
        size--;
        return item;
    }

    /** The items, oldest first. */
    public List<T> toList() {
        List<T> out = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            out.add(get(i));
        }
        return out;
    }

    public void clear() {
        for (int i = 0; i < items.length; i++) {
            items[i] = null;
        }
        head = 0;
        size = 0;
    }
}
