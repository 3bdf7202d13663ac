'use strict';

const {
  parseRule,
  applyDiscount,
  bestDiscount,
  unitPriceFor,
  lineTotal,
  bookingFee,
  taxFor,
  isValidPromoCode,
  orderTotal,
} = require('../lib/pricing');

const TIERS = [
  { min: 10, unit: 2200 },
  { min: 1, unit: 2500 },
  { min: 50, unit: 2000 },
];

describe('discount rules', () => {
  test('parseRule reads percentages', () => {
    expect(parseRule('15%')).toEqual({ kind: 'percent', value: 15 });
    expect(parseRule(' 7.5% ')).toEqual({ kind: 'percent', value: 7.5 });
  });

  test('parseRule reads fixed amounts', () => {
    expect(parseRule('5.00 off')).toEqual({ kind: 'fixed', value: 500 });
    expect(parseRule('$3')).toEqual({ kind: 'fixed', value: 300 });
    expect(parseRule('2 OFF')).toEqual({ kind: 'fixed', value: 200 });
  });

  test('parseRule rejects what it cannot read', () => {
    expect(() => parseRule('%')).toThrow('bad percentage');
    expect(() => parseRule('abc%')).toThrow('bad percentage');
    expect(() => parseRule('free')).toThrow('bad discount rule');
    expect(() => parseRule('1.234 off')).toThrow(SyntaxError);
  });

  test('applyDiscount takes a percentage off', () => {
    expect(applyDiscount(2000, { kind: 'percent', value: 15 })).toBe(1700);
    expect(applyDiscount(1999, { kind: 'percent', value: 15 })).toBe(1699);
    expect(applyDiscount(1000, { kind: 'percent', value: 0 })).toBe(1000);
    expect(applyDiscount(1000, { kind: 'percent', value: 100 })).toBe(0);
    expect(applyDiscount(1000, { kind: 'percent', value: 7.5 })).toBe(925);
  });

  test('applyDiscount takes a fixed amount off but never below zero', () => {
    expect(applyDiscount(2000, { kind: 'fixed', value: 500 })).toBe(1500);
    expect(applyDiscount(501, { kind: 'fixed', value: 500 })).toBe(1);
    expect(applyDiscount(500, { kind: 'fixed', value: 500 })).toBe(0);
    expect(applyDiscount(400, { kind: 'fixed', value: 500 })).toBe(0);
  });

  test('applyDiscount without a rule or with a bad rule', () => {
    expect(applyDiscount(1234, undefined)).toBe(1234);
    expect(applyDiscount(1234, null)).toBe(1234);
    expect(() => applyDiscount(1000, { kind: 'percent', value: 101 })).toThrow(RangeError);
    expect(() => applyDiscount(1000, { kind: 'percent', value: -1 })).toThrow(RangeError);
    expect(() => applyDiscount(1000, { kind: 'voucher', value: 5 })).toThrow('unknown discount kind');
  });

  test('bestDiscount picks the lowest price and keeps the first on ties', () => {
    const tenPercent = { kind: 'percent', value: 10 };
    const threeOff = { kind: 'fixed', value: 300 };
    const twentyPercent = { kind: 'percent', value: 20 };
    const twoOff = { kind: 'fixed', value: 200 };
    expect(bestDiscount(2000, [tenPercent, threeOff, twentyPercent])).toBe(twentyPercent);
    expect(bestDiscount(2000, [twoOff, tenPercent])).toBe(twoOff);
    expect(bestDiscount(2000, [tenPercent, twoOff])).toBe(tenPercent);
    expect(bestDiscount(2000, [])).toBe(null);
    expect(bestDiscount(2000, [{ kind: 'fixed', value: 0 }])).toBe(null);
  });
});

describe('tiers and fees', () => {
  test('unitPriceFor picks the largest tier reached', () => {
    expect(unitPriceFor(1, TIERS)).toBe(2500);
    expect(unitPriceFor(9, TIERS)).toBe(2500);
    expect(unitPriceFor(10, TIERS)).toBe(2200);
    expect(unitPriceFor(49, TIERS)).toBe(2200);
    expect(unitPriceFor(50, TIERS)).toBe(2000);
    expect(unitPriceFor(500, TIERS)).toBe(2000);
    expect(unitPriceFor(12, [{ min: 10, unit: 2200 }, { min: 10, unit: 2100 }])).toBe(2200);
  });

  test('unitPriceFor rejects quantities no tier covers', () => {
    expect(() => unitPriceFor(0, TIERS)).toThrow('at least 1');
    expect(() => unitPriceFor(4, [{ min: 5, unit: 100 }])).toThrow('no tier covers quantity 4');
    expect(unitPriceFor(5, [{ min: 5, unit: 100 }])).toBe(100);
  });

  test('lineTotal prefers a fixed unit price, even zero', () => {
    expect(lineTotal({ quantity: 3, unitPrice: 1500 })).toBe(4500);
    expect(lineTotal({ quantity: 10, tiers: TIERS })).toBe(22000);
    expect(lineTotal({ quantity: 2, unitPrice: 0, tiers: TIERS })).toBe(0);
    expect(() => lineTotal({ quantity: 2 })).toThrow('no tier covers');
  });

  test('bookingFee charges per ticket up to the cap', () => {
    const lines = [{ quantity: 2 }, { quantity: 3 }];
    expect(bookingFee(lines, 150)).toBe(750);
    expect(bookingFee(lines, 150, 600)).toBe(600);
    expect(bookingFee(lines, 150, 750)).toBe(750);
    expect(bookingFee(lines, 150, 0)).toBe(0);
    expect(bookingFee(lines, 150, 1000)).toBe(750);
  });

  test('taxFor rounds half away from zero', () => {
    expect(taxFor(1000, 20)).toBe(200);
    expect(taxFor(1999, 7.25)).toBe(145);
    expect(taxFor(250, 5)).toBe(13);
    expect(taxFor(0, 20)).toBe(0);
  });

  test('isValidPromoCode checks length, characters and hyphens', () => {
    expect(isValidPromoCode('SUMMER24')).toBe(true);
    expect(isValidPromoCode('ABCD')).toBe(true);
    expect(isValidPromoCode('ABCDEFGHIJKL')).toBe(true);
    expect(isValidPromoCode('EARLY-BIRD')).toBe(true);
    expect(isValidPromoCode('ABC')).toBe(false);
    expect(isValidPromoCode('ABCDEFGHIJKLM')).toBe(false);
    expect(isValidPromoCode('summer')).toBe(false);
    expect(isValidPromoCode('-ABCD')).toBe(false);
    expect(isValidPromoCode('ABCD-')).toBe(false);
    expect(isValidPromoCode('AB--CD')).toBe(false);
    expect(isValidPromoCode(12345)).toBe(false);
  });
});

describe('orderTotal', () => {
  test('combines lines, discount, tax and capped fees', () => {
    const lines = [
      { quantity: 2, unitPrice: 2500 },
      { quantity: 10, tiers: TIERS },
    ];
    const options = { discount: { kind: 'percent', value: 10 }, taxRate: 20, feePerTicket: 100, feeCap: 1000 };
    expect(orderTotal(lines, options)).toEqual({
      subtotal: 27000,
      discount: 2700,
      tax: 4860,
      fee: 1000,
      total: 30160,
    });
  });

  test('defaults to the standard tax rate and fee, and takes zero for either', () => {
    const lines = [{ quantity: 2, unitPrice: 2500 }];
    expect(orderTotal(lines)).toEqual({ subtotal: 5000, discount: 0, tax: 1000, fee: 200, total: 6200 });
    expect(orderTotal(lines, { taxRate: 0, feePerTicket: 0 })).toEqual({
      subtotal: 5000,
      discount: 0,
      tax: 0,
      fee: 0,
      total: 5000,
    });
    expect(orderTotal(lines, { taxIncluded: true, feePerTicket: 50 })).toEqual({
      subtotal: 5000,
      discount: 0,
      tax: 0,
      fee: 100,
      total: 5100,
    });
  });
});
