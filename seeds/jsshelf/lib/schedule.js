'use strict';

// Time slots are half-open intervals [start, end) in minutes since midnight.

const MINUTES_PER_DAY = 24 * 60;

function parseTime(text) {
  const match = /^(\d{1,2}):(\d{2})$/.exec(String(text).trim());
  if (!match) {
    throw new SyntaxError(`bad time: ${text}`);
  }
  const hours = Number(match[1]);
  const minutes = Number(match[2]);
  if (hours > 24 || minutes > 59 || (hours === 24 && minutes > 0)) {
    throw new RangeError(`time out of range: ${text}`);
  }
  return hours * 60 + minutes;
}

function formatTime(total) {
  if (total < 0 || total > MINUTES_PER_DAY) {
    throw new RangeError(`minute out of range: ${total}`);
  }
  const hours = Math.floor(total / 60);
  const minutes = total % 60;
  return `${String(hours).padStart(2, '0')}:${String(minutes).padStart(2, '0')}`;
}

function slot(start, end) {
  if (end <= start) {
    throw new RangeError(`empty or reversed slot: ${start}-${end}`);
  }
  return { start, end };
}

const duration = (s) => s.end - s.start;

function overlaps(a, b) {
  return a.start < b.end && b.start < a.end;
}

function touches(a, b) {
  return a.start <= b.end && b.start <= a.end;
}

function mergeSlots(slots, options = {}) {
  const joinTouching = options.joinTouching ?? true;
  const sorted = [...slots].sort((x, y) => x.start - y.start);
  const merged = [];
  for (const s of sorted) {
    const last = merged[merged.length - 1];
    const joins = last !== undefined && (joinTouching ? touches(last, s) : overlaps(last, s));
    if (joins) {
      last.end = Math.max(last.end, s.end);
    } else {
      merged.push({ start: s.start, end: s.end });
    }
  }
  return merged;
}

function gaps(slots, dayStart, dayEnd) {
  const out = [];
  let cursor = dayStart;
  for (const s of mergeSlots(slots)) {
    if (s.end <= cursor) {
      continue;
    }
    if (s.start >= dayEnd) {
      break;
    }
    if (s.start > cursor) {
      out.push({ start: cursor, end: s.start });
    }
    cursor = s.end;
  }
  if (cursor < dayEnd) {
    out.push({ start: cursor, end: dayEnd });
  }
  return out;
}

function freeWindows(busy, minLength, dayStart = 0, dayEnd = MINUTES_PER_DAY) {
  return gaps(busy, dayStart, dayEnd).filter((g) => duration(g) >= minLength);
}

function firstFit(busy, length, dayStart = 0, dayEnd = MINUTES_PER_DAY) {
  const windows = freeWindows(busy, length, dayStart, dayEnd);
  return windows[0]?.start ?? null;
}

function totalBooked(slots) {
  return mergeSlots(slots).reduce((sum, s) => sum + duration(s), 0);
}

function conflicts(slots) {
  const sorted = [...slots].sort((x, y) => x.start - y.start);
  const pairs = [];
  for (let i = 0; i < sorted.length; i++) {
    for (let j = i + 1; j < sorted.length; j++) {
      if (sorted[j].start >= sorted[i].end) {
        break;
      }
      pairs.push([sorted[i], sorted[j]]);
    }
  }
  return pairs;
}

module.exports = {
  MINUTES_PER_DAY,
  parseTime,
  formatTime,
  slot,
  duration,
  overlaps,
  touches,
  mergeSlots,
  gaps,
  freeWindows,
  firstFit,
  totalBooked,
  conflicts,
};
