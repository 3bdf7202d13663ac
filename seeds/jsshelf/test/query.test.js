'use strict';

const {
  getPath,
  parseValue,
  parseCondition,
  compare,
  compareValues,
  matches,
  where,
  sortBy,
  countBy,
  paginate,
} = require('../lib/query');

const EVENTS = [
  { id: 1, title: 'Jazz Night', price: 25, venue: { city: 'Lyon' }, soldOut: false },
  { id: 2, title: 'Rock Festival', price: 60, venue: { city: 'Nice' }, soldOut: true },
  { id: 3, title: 'Morning Jazz Brunch', price: 20, venue: { city: 'Lyon' }, soldOut: false },
  { id: 4, title: 'Poetry Reading', price: 0, venue: null, soldOut: false },
  { id: 5, title: 'Chamber Music', venue: { city: 'Paris' }, soldOut: false },
];

const ids = (rows) => rows.map((row) => row.id);

describe('paths and values', () => {
  test('getPath follows dotted paths and stops at missing parts', () => {
    const row = { venue: { city: 'Lyon' }, price: 0, host: null };
    expect(getPath(row, 'venue.city')).toBe('Lyon');
    expect(getPath(row, 'price')).toBe(0);
    expect(getPath(row, 'venue.country')).toBe(undefined);
    expect(getPath(row, 'missing.deep.key')).toBe(undefined);
    expect(getPath(row, 'host.name')).toBe(undefined);
  });

  test('parseValue reads literals, numbers and quoted text', () => {
    expect(parseValue('true')).toBe(true);
    expect(parseValue('false')).toBe(false);
    expect(parseValue('null')).toBe(null);
    expect(parseValue('42')).toBe(42);
    expect(parseValue('-3.5')).toBe(-3.5);
    expect(parseValue('"42"')).toBe('42');
    expect(parseValue('""')).toBe('');
    expect(parseValue('"')).toBe('"');
    expect(parseValue('Lyon')).toBe('Lyon');
  });

  test('parseCondition splits path, operator and value', () => {
    expect(parseCondition('price >= 20')).toEqual({ path: 'price', op: 'gte', value: 20 });
    expect(parseCondition('venue.city=Lyon')).toEqual({ path: 'venue.city', op: 'eq', value: 'Lyon' });
    expect(parseCondition('title ~ jazz night')).toEqual({ path: 'title', op: 'contains', value: 'jazz night' });
    expect(parseCondition('a != null').op).toBe('ne');
    expect(parseCondition('a < 1').op).toBe('lt');
    expect(parseCondition('a <= 1').op).toBe('lte');
    expect(parseCondition('a > 1').op).toBe('gt');
  });

  test('parseCondition rejects text without a path or operator', () => {
    expect(() => parseCondition('price')).toThrow(SyntaxError);
    expect(() => parseCondition('>= 20')).toThrow('bad condition');
    expect(() => parseCondition('')).toThrow(SyntaxError);
  });
});

describe('compare and matches', () => {
  test('compare handles ordering operators at the boundary', () => {
    expect(compare(5, 'lt', 5)).toBe(false);
    expect(compare(4, 'lt', 5)).toBe(true);
    expect(compare(5, 'lte', 5)).toBe(true);
    expect(compare(6, 'lte', 5)).toBe(false);
    expect(compare(5, 'gt', 5)).toBe(false);
    expect(compare(6, 'gt', 5)).toBe(true);
    expect(compare(5, 'gte', 5)).toBe(true);
    expect(compare(4, 'gte', 5)).toBe(false);
  });

  test('compare handles equality, membership and text search', () => {
    expect(compare('a', 'eq', 'a')).toBe(true);
    expect(compare(1, 'eq', '1')).toBe(false);
    expect(compare(1, 'ne', 2)).toBe(true);
    expect(compare(2, 'ne', 2)).toBe(false);
    expect(compare(2, 'in', [1, 2])).toBe(true);
    expect(compare(3, 'in', [1, 2])).toBe(false);
    expect(compare('a', 'in', 'abc')).toBe(false);
    expect(compare('Jazz Night', 'contains', 'JAZZ')).toBe(true);
    expect(compare('Rock', 'contains', 'jazz')).toBe(false);
    expect(compare(42, 'contains', '4')).toBe(false);
    expect(() => compare(1, 'near', 2)).toThrow('unknown operator');
  });

  test('compareValues orders values and puts missing ones last', () => {
    expect(compareValues(1, 1)).toBe(0);
    expect(compareValues(1, 2)).toBe(-1);
    expect(compareValues(2, 1)).toBe(1);
    expect(compareValues('a', 'b')).toBe(-1);
    expect(compareValues(undefined, 1)).toBe(1);
    expect(compareValues(1, undefined)).toBe(-1);
    expect(compareValues(undefined, undefined)).toBe(0);
  });

  test('matches needs every condition', () => {
    const row = EVENTS[0];
    expect(matches(row, [parseCondition('price > 20'), parseCondition('venue.city = Lyon')])).toBe(true);
    expect(matches(row, [parseCondition('price > 20'), parseCondition('venue.city = Nice')])).toBe(false);
    expect(matches(row, [])).toBe(true);
  });
});

describe('where, sorting and paging', () => {
  test('where filters with a text query', () => {
    expect(ids(where(EVENTS, 'price >= 20 and venue.city = Lyon'))).toEqual([1, 3]);
    expect(ids(where(EVENTS, 'title ~ jazz'))).toEqual([1, 3]);
    expect(ids(where(EVENTS, 'price > 20'))).toEqual([1, 2]);
    expect(ids(where(EVENTS, 'price < 20 AND soldOut = false'))).toEqual([4]);
  });

  test('where accepts a list of conditions', () => {
    const query = [{ path: 'venue.city', op: 'in', value: ['Nice', 'Paris'] }];
    expect(ids(where(EVENTS, query))).toEqual([2, 5]);
    expect(ids(where(EVENTS, []))).toEqual([1, 2, 3, 4, 5]);
  });

  test('sortBy orders rows and puts missing values last', () => {
    expect(ids(sortBy(EVENTS, 'price'))).toEqual([4, 3, 1, 2, 5]);
    expect(ids(sortBy(EVENTS, 'price', true))).toEqual([2, 1, 3, 4, 5]);
    expect(ids(sortBy(EVENTS, 'venue.city'))).toEqual([1, 3, 2, 5, 4]);
    expect(ids(sortBy(EVENTS, 'venue.city', true))).toEqual([5, 2, 1, 3, 4]);
    expect(ids(sortBy([EVENTS[4], EVENTS[1], EVENTS[0]], 'price'))).toEqual([1, 2, 5]);
    expect(ids(EVENTS)).toEqual([1, 2, 3, 4, 5]);
  });

  test('countBy counts values and files missing ones under none', () => {
    expect(countBy(EVENTS, 'venue.city')).toEqual({ Lyon: 2, Nice: 1, none: 1, Paris: 1 });
    expect(countBy([{ n: 0 }, { n: 0 }, { n: false }, {}], 'n')).toEqual({ 0: 2, false: 1, none: 1 });
    expect(countBy([], 'n')).toEqual({});
  });

  test('paginate slices pages and reports the page count', () => {
    const rows = [0, 1, 2, 3, 4, 5, 6];
    expect(paginate(rows, 1, 3)).toEqual({ items: [0, 1, 2], page: 1, pages: 3 });
    expect(paginate(rows, 3, 3)).toEqual({ items: [6], page: 3, pages: 3 });
    expect(paginate(rows, 4, 3)).toEqual({ items: [], page: 4, pages: 3 });
    expect(paginate(rows, 0, 3)).toEqual({ items: [], page: 0, pages: 3 });
    expect(paginate(rows, -1, 3)).toEqual({ items: [], page: -1, pages: 3 });
    expect(paginate(rows.slice(0, 6), 2, 3)).toEqual({ items: [3, 4, 5], page: 2, pages: 2 });
    expect(paginate([], 1, 3)).toEqual({ items: [], page: 1, pages: 1 });
  });

  test('paginate rejects a page size below one', () => {
    expect(() => paginate([1, 2], 1, 0)).toThrow(RangeError);
    expect(paginate([1, 2], 2, 1)).toEqual({ items: [2], page: 2, pages: 2 });
  });
});
