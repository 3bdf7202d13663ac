'use strict';

const {
  parseAmount,
  tryParseAmount,
  formatCents,
  roundDiv,
  percentOf,
  splitEvenly,
  sumCents,
} = require('../lib/money');

describe('parseAmount', () => {
  test('parses plain decimal amounts', () => {
    expect(parseAmount('12.34')).toBe(1234);
    expect(parseAmount('12.3')).toBe(1230);
    expect(parseAmount('7')).toBe(700);
    expect(parseAmount('0.05')).toBe(5);
  });

  test('accepts currency symbols and thousands separators', () => {
    expect(parseAmount('$1,234.50')).toBe(123450);
    expect(parseAmount('€ 7')).toBe(700);
    expect(parseAmount('  £19.99 ')).toBe(1999);
  });

  test('parses negative amounts', () => {
    expect(parseAmount('-$3.05')).toBe(-305);
    expect(parseAmount('-0.5')).toBe(-50);
  });

  test('rounds plain numbers to whole cents', () => {
    expect(parseAmount(19.999)).toBe(2000);
    expect(parseAmount(0.1 + 0.2)).toBe(30);
    expect(parseAmount(-2)).toBe(-200);
    expect(() => parseAmount(Infinity)).toThrow(RangeError);
  });

  test('rejects empty and malformed text', () => {
    expect(() => parseAmount('')).toThrow('empty amount');
    expect(() => parseAmount(null)).toThrow('empty amount');
    expect(() => parseAmount(undefined)).toThrow('empty amount');
    expect(() => parseAmount('   ')).toThrow('empty amount');
    expect(() => parseAmount('1.234')).toThrow('bad amount');
    expect(() => parseAmount('12a')).toThrow(SyntaxError);
  });

  test('tryParseAmount falls back only on bad input', () => {
    expect(tryParseAmount('two', -1)).toBe(-1);
    expect(tryParseAmount('2.50', -1)).toBe(250);
    expect(tryParseAmount('0', 5)).toBe(0);
  });
});

describe('formatCents', () => {
  test('groups thousands', () => {
    expect(formatCents(0)).toBe('$0.00');
    expect(formatCents(5)).toBe('$0.05');
    expect(formatCents(123456789)).toBe('$1,234,567.89');
    expect(formatCents(10000000)).toBe('$100,000.00');
    expect(formatCents(100000000)).toBe('$1,000,000.00');
  });

  test('leaves three digits without a separator', () => {
    expect(formatCents(99999)).toBe('$999.99');
    expect(formatCents(100000)).toBe('$1,000.00');
  });

  test('puts the minus sign before the symbol', () => {
    expect(formatCents(-305)).toBe('-$3.05');
    expect(formatCents(-100000)).toBe('-$1,000.00');
  });

  test('takes a custom or empty symbol and separator', () => {
    expect(formatCents(123450, { symbol: '', separator: ' ' })).toBe('1 234.50');
    expect(formatCents(1200, { symbol: '€' })).toBe('€12.00');
    expect(formatCents(123450, { separator: '' })).toBe('$1234.50');
    expect(() => formatCents(1.5)).toThrow(TypeError);
  });
});

describe('rounding and splitting', () => {
  test('roundDiv rounds half away from zero', () => {
    expect(roundDiv(5, 2)).toBe(3);
    expect(roundDiv(7, 3)).toBe(2);
    expect(roundDiv(8, 3)).toBe(3);
    expect(roundDiv(1, 4)).toBe(0);
    expect(roundDiv(2, 4)).toBe(1);
    expect(roundDiv(-5, 2)).toBe(-3);
    expect(roundDiv(5, -2)).toBe(-3);
    expect(roundDiv(-5, -2)).toBe(3);
    expect(roundDiv(0, 7)).toBe(0);
    expect(roundDiv(0, -7)).toBe(0);
    expect(() => roundDiv(1, 0)).toThrow('division by zero');
  });

  test('percentOf works in basis points', () => {
    expect(percentOf(1999, 15)).toBe(300);
    expect(percentOf(1000, 7.25)).toBe(73);
    expect(percentOf(200, 12.5)).toBe(25);
    expect(percentOf(-1000, 7.25)).toBe(-73);
    expect(percentOf(10, 5)).toBe(1);
    expect(percentOf(9, 5)).toBe(0);
    expect(() => percentOf(7.5, 10)).toThrow(TypeError);
  });

  test('splitEvenly hands the remainder to the first shares', () => {
    expect(splitEvenly(100, 3)).toEqual([34, 33, 33]);
    expect(splitEvenly(7, 2)).toEqual([4, 3]);
    expect(splitEvenly(-7, 2)).toEqual([-4, -3]);
    expect(splitEvenly(9, 3)).toEqual([3, 3, 3]);
    expect(splitEvenly(2, 4)).toEqual([1, 1, 0, 0]);
    expect(splitEvenly(5, 1)).toEqual([5]);
  });

  test('splitEvenly rejects bad part counts', () => {
    expect(() => splitEvenly(100, 0)).toThrow(RangeError);
    expect(() => splitEvenly(100, -1)).toThrow(RangeError);
    expect(() => splitEvenly(100, 1.5)).toThrow('positive integer');
  });

  test('sumCents adds integer amounts and rejects fractions', () => {
    expect(sumCents([100, 250, -50])).toBe(300);
    expect(sumCents([])).toBe(0);
    expect(() => sumCents([1, 2.5])).toThrow(TypeError);
  });
});
