'use strict';

const { slugify, truncate, wrap, titleCase, initials, pluralize } = require('../lib/text');

describe('slugify', () => {
  test('lower-cases words and joins them with hyphens', () => {
    expect(slugify('Jazz Night at the Opera!')).toBe('jazz-night-at-the-opera');
    expect(slugify('  Café  Crème  ')).toBe('cafe-creme');
    expect(slugify('Spring 2024 / Tour')).toBe('spring-2024-tour');
  });

  test('takes a separator and handles empty input', () => {
    expect(slugify('Open Air Stage', '_')).toBe('open_air_stage');
    expect(slugify('')).toBe('');
    expect(slugify(null)).toBe('');
    expect(slugify('!!!')).toBe('');
    expect(slugify(0)).toBe('0');
  });
});

describe('truncate', () => {
  test('leaves short text alone', () => {
    expect(truncate('Concert', 7)).toBe('Concert');
    expect(truncate('Concert', 10)).toBe('Concert');
  });

  test('cuts long text and adds an ellipsis within the limit', () => {
    expect(truncate('Symphony Orchestra', 10)).toBe('Symphon...');
    expect(truncate('Symphony Orchestra', 8)).toBe('Symph...');
    expect(truncate('Rock and roll', 8)).toBe('Rock...');
    expect(truncate('Hello world', 3)).toBe('...');
  });

  test('can cut at a word boundary', () => {
    expect(truncate('Late night jazz session', 15, { atWord: true })).toBe('Late night...');
    expect(truncate('Supercalifragilistic', 10, { atWord: true })).toBe('Superca...');
    expect(truncate('Late night jazz session', 15)).toBe('Late night j...');
    expect(truncate(' Supercalifragilistic', 10, { atWord: true })).toBe(' Superc...');
    expect(truncate('A longwordhere', 10, { atWord: true })).toBe('A...');
  });

  test('takes a custom or empty ellipsis and rejects tiny limits', () => {
    expect(truncate('Symphony Orchestra', 8, { ellipsis: '' })).toBe('Symphony');
    expect(truncate('Symphony Orchestra', 5, { ellipsis: '~' })).toBe('Symp~');
    expect(() => truncate('Hello world', 2)).toThrow(RangeError);
  });
});

describe('wrap', () => {
  test('fills lines greedily up to the width', () => {
    expect(wrap('the quick brown fox jumps', 10)).toEqual(['the quick', 'brown fox', 'jumps']);
    expect(wrap('abcde fghij', 11)).toEqual(['abcde fghij']);
    expect(wrap('abcde fghij', 10)).toEqual(['abcde', 'fghij']);
  });

  test('breaks words longer than the width', () => {
    expect(wrap('a verylongword b', 4)).toEqual(['a', 'very', 'long', 'word', 'b']);
    expect(wrap('abcdefgh', 4)).toEqual(['abcd', 'efgh']);
  });

  test('returns no lines for blank text and rejects a zero width', () => {
    expect(wrap('', 5)).toEqual([]);
    expect(wrap('   ', 5)).toEqual([]);
    expect(() => wrap('abc', 0)).toThrow('width must be positive');
    expect(wrap('a b', 1)).toEqual(['a', 'b']);
  });
});

describe('names and counts', () => {
  test('titleCase keeps small words low except at the edges', () => {
    expect(titleCase('the night of the living jazz')).toBe('The Night of the Living Jazz');
    expect(titleCase('an evening AT the opera')).toBe('An Evening at the Opera');
    expect(titleCase('music to dance to')).toBe('Music to Dance To');
    expect(titleCase('rock  and roll')).toBe('Rock  and Roll');
  });

  test('initials takes the first letters up to a maximum', () => {
    expect(initials('Ada Lovelace')).toBe('AL');
    expect(initials('jean-paul sartre')).toBe('JP');
    expect(initials('jean-paul sartre', 3)).toBe('JPS');
    expect(initials('Ada Lovelace', 1)).toBe('A');
    expect(initials('Cher')).toBe('C');
    expect(initials('  ada  byron ')).toBe('AB');
    expect(initials('123 Club')).toBe('C');
    expect(initials('')).toBe('');
  });

  test('pluralize picks the singular only for one', () => {
    expect(pluralize(1, 'ticket')).toBe('1 ticket');
    expect(pluralize(0, 'ticket')).toBe('0 tickets');
    expect(pluralize(2, 'ticket')).toBe('2 tickets');
    expect(pluralize(3, 'person', 'people')).toBe('3 people');
    expect(pluralize(1, 'person', 'people')).toBe('1 person');
  });
});
