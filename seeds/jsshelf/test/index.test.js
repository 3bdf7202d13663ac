'use strict';

const shelf = require('../lib/index');

describe('index', () => {
  test('exposes every module by name', () => {
    expect(Object.keys(shelf.money)).toContain('formatCents');
    expect(Object.keys(shelf.seats)).toContain('findBlock');
    expect(Object.keys(shelf.schedule)).toContain('freeWindows');
    expect(Object.keys(shelf.pricing)).toContain('orderTotal');
    expect(Object.keys(shelf.text)).toContain('slugify');
    expect(Object.keys(shelf.query)).toContain('where');
  });

  test('re-exports functions at the top level', () => {
    expect(shelf.formatCents(shelf.parseAmount('1234.5'))).toBe('$1,234.50');
    expect(shelf.expandRange('A1-A2')).toEqual(['A1', 'A2']);
    expect(shelf.slugify('Box Office')).toBe('box-office');
    expect(shelf.orderTotal([{ quantity: 1, unitPrice: 900 }]).total).toBe(1180);
  });
});
