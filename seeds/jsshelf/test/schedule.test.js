'use strict';

const {
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
} = require('../lib/schedule');

describe('times', () => {
  test('parseTime reads hours and minutes', () => {
    expect(parseTime('09:30')).toBe(570);
    expect(parseTime('0:00')).toBe(0);
    expect(parseTime('23:59')).toBe(1439);
    expect(parseTime('24:00')).toBe(1440);
    expect(parseTime(' 7:05 ')).toBe(425);
  });

  test('parseTime rejects malformed and out of range times', () => {
    expect(() => parseTime('9:5')).toThrow(SyntaxError);
    expect(() => parseTime('noon')).toThrow('bad time');
    expect(() => parseTime('25:00')).toThrow(RangeError);
    expect(() => parseTime('24:01')).toThrow(RangeError);
    expect(() => parseTime('12:60')).toThrow('out of range');
  });

  test('formatTime pads hours and minutes', () => {
    expect(formatTime(570)).toBe('09:30');
    expect(formatTime(0)).toBe('00:00');
    expect(formatTime(65)).toBe('01:05');
    expect(formatTime(1440)).toBe('24:00');
    expect(() => formatTime(-1)).toThrow(RangeError);
    expect(() => formatTime(1441)).toThrow(RangeError);
  });
});

describe('slots', () => {
  test('slot refuses empty and reversed slots', () => {
    expect(slot(60, 90)).toEqual({ start: 60, end: 90 });
    expect(() => slot(90, 90)).toThrow(RangeError);
    expect(() => slot(90, 60)).toThrow('reversed');
    expect(duration(slot(60, 135))).toBe(75);
  });

  test('overlaps ignores slots that only touch', () => {
    expect(overlaps(slot(0, 60), slot(59, 120))).toBe(true);
    expect(overlaps(slot(0, 60), slot(60, 120))).toBe(false);
    expect(overlaps(slot(60, 120), slot(0, 60))).toBe(false);
    expect(overlaps(slot(0, 100), slot(20, 30))).toBe(true);
    expect(overlaps(slot(20, 30), slot(0, 100))).toBe(true);
  });

  test('touches includes shared end points', () => {
    expect(touches(slot(0, 60), slot(60, 120))).toBe(true);
    expect(touches(slot(60, 120), slot(0, 60))).toBe(true);
    expect(touches(slot(0, 60), slot(61, 120))).toBe(false);
    expect(touches(slot(61, 120), slot(0, 60))).toBe(false);
  });

  test('mergeSlots joins overlapping and touching slots', () => {
    const merged = mergeSlots([slot(90, 120), slot(0, 30), slot(20, 60), slot(60, 80)]);
    expect(merged).toEqual([slot(0, 80), slot(90, 120)]);
    expect(mergeSlots([slot(0, 100), slot(10, 20)])).toEqual([slot(0, 100)]);
    expect(mergeSlots([])).toEqual([]);
  });

  test('mergeSlots can keep touching slots apart without changing its input', () => {
    const input = [slot(0, 30), slot(30, 60), slot(50, 70)];
    expect(mergeSlots(input, { joinTouching: false })).toEqual([slot(0, 30), slot(30, 70)]);
    expect(input).toEqual([slot(0, 30), slot(30, 60), slot(50, 70)]);
  });

  test('gaps lists the free time between bookings', () => {
    const busy = [slot(180, 240), slot(60, 120)];
    expect(gaps(busy, 0, 300)).toEqual([slot(0, 60), slot(120, 180), slot(240, 300)]);
    expect(gaps(busy, 60, 240)).toEqual([slot(120, 180)]);
    expect(gaps([], 0, 100)).toEqual([slot(0, 100)]);
  });

  test('gaps clips bookings outside the day', () => {
    expect(gaps([slot(0, 100), slot(500, 600)], 60, 400)).toEqual([slot(100, 400)]);
    expect(gaps([slot(400, 500)], 60, 400)).toEqual([slot(60, 400)]);
    expect(gaps([slot(0, 60)], 60, 120)).toEqual([slot(60, 120)]);
    expect(gaps([slot(0, 1440)], 0, 1440)).toEqual([]);
  });

  test('freeWindows keeps gaps of at least the minimum length', () => {
    const busy = [slot(60, 120), slot(150, 300)];
    expect(freeWindows(busy, 30, 0, 360)).toEqual([slot(0, 60), slot(120, 150), slot(300, 360)]);
    expect(freeWindows(busy, 31, 0, 360)).toEqual([slot(0, 60), slot(300, 360)]);
    expect(freeWindows([slot(0, 1000)], 440)).toEqual([slot(1000, 1440)]);
  });

  test('firstFit finds the earliest start or null', () => {
    expect(firstFit([slot(0, 60)], 30, 0, 120)).toBe(60);
    expect(firstFit([], 30, 0, 120)).toBe(0);
    expect(firstFit([slot(30, 90)], 30, 0, 120)).toBe(0);
    expect(firstFit([slot(0, 100)], 30, 0, 120)).toBe(null);
    expect(firstFit([slot(0, 1400)], 40)).toBe(1400);
  });

  test('totalBooked counts overlapping time once', () => {
    expect(totalBooked([slot(0, 60), slot(30, 90), slot(120, 150)])).toBe(120);
    expect(totalBooked([])).toBe(0);
  });

  test('conflicts pairs every overlapping booking', () => {
    const a = slot(0, 60);
    const b = slot(30, 90);
    const c = slot(60, 120);
    const d = slot(200, 210);
    expect(conflicts([d, c, b, a])).toEqual([
      [a, b],
      [b, c],
    ]);
    expect(conflicts([slot(0, 30), slot(30, 60)])).toEqual([]);
    expect(conflicts([slot(0, 100), slot(10, 20), slot(30, 40)])).toEqual([
      [slot(0, 100), slot(10, 20)],
      [slot(0, 100), slot(30, 40)],
    ]);
  });
});
