'use strict';

const {
  rowIndex,
  rowLetters,
  parseSeat,
  seatLabel,
  compareSeats,
  expandRange,
  areAdjacent,
  findBlock,
  countByRow,
} = require('../lib/seats');

describe('rows', () => {
  test('rowIndex counts letters from zero', () => {
    expect(rowIndex('A')).toBe(0);
    expect(rowIndex('Z')).toBe(25);
    expect(rowIndex('AA')).toBe(26);
    expect(rowIndex('AZ')).toBe(51);
    expect(rowIndex('BA')).toBe(52);
  });

  test('rowLetters is the inverse of rowIndex', () => {
    expect(rowLetters(0)).toBe('A');
    expect(rowLetters(25)).toBe('Z');
    expect(rowLetters(26)).toBe('AA');
    expect(rowLetters(51)).toBe('AZ');
    expect(rowLetters(52)).toBe('BA');
    expect(rowLetters(701)).toBe('ZZ');
  });

  test('rowLetters rejects negative and fractional rows', () => {
    expect(() => rowLetters(-1)).toThrow(RangeError);
    expect(() => rowLetters(1.5)).toThrow('bad row index');
  });
});

describe('labels', () => {
  test('parseSeat reads row and number', () => {
    expect(parseSeat('A12')).toEqual({ row: 0, number: 12 });
    expect(parseSeat(' k7 ')).toEqual({ row: 10, number: 7 });
    expect(parseSeat('AB3')).toEqual({ row: 27, number: 3 });
    expect(parseSeat('A1')).toEqual({ row: 0, number: 1 });
  });

  test('parseSeat rejects malformed labels and seat zero', () => {
    for (const bad of ['12A', 'A', '', 'ABC1', 'A1234']) {
      expect(() => parseSeat(bad)).toThrow(SyntaxError);
    }
    expect(() => parseSeat(null)).toThrow(TypeError);
    expect(() => parseSeat(12)).toThrow('must be a string');
    expect(() => parseSeat('A0')).toThrow('seat numbers start at 1');
  });

  test('seatLabel joins row letters and number', () => {
    expect(seatLabel(0, 1)).toBe('A1');
    expect(seatLabel(27, 3)).toBe('AB3');
    expect(seatLabel(2, 14)).toBe('C14');
  });

  test('compareSeats orders by row then number', () => {
    const seats = ['B2', 'A10', 'B1', 'A9', 'AA1'].map(parseSeat).sort(compareSeats);
    expect(seats.map((s) => seatLabel(s.row, s.number))).toEqual(['A9', 'A10', 'B1', 'B2', 'AA1']);
    expect(compareSeats(parseSeat('C3'), parseSeat('C3'))).toBe(0);
  });
});

describe('ranges and blocks', () => {
  test('expandRange lists every seat in the range', () => {
    expect(expandRange('B3-B6')).toEqual(['B3', 'B4', 'B5', 'B6']);
    expect(expandRange('C2')).toEqual(['C2']);
    expect(expandRange('D5-D5')).toEqual(['D5']);
  });

  test('expandRange rejects ranges across rows or backwards', () => {
    expect(() => expandRange('A1-B2')).toThrow('one row');
    expect(() => expandRange('A5-A4')).toThrow('backwards');
  });

  test('areAdjacent needs the same row and neighbouring numbers', () => {
    expect(areAdjacent('A1', 'A2')).toBe(true);
    expect(areAdjacent('A2', 'A1')).toBe(true);
    expect(areAdjacent('A1', 'A3')).toBe(false);
    expect(areAdjacent('A1', 'B1')).toBe(false);
    expect(areAdjacent('A1', 'B2')).toBe(false);
    expect(areAdjacent('A5', 'A5')).toBe(false);
  });

  test('areAdjacent treats an aisle as a separation', () => {
    expect(areAdjacent('A4', 'A5', [4])).toBe(false);
    expect(areAdjacent('A5', 'A4', [4])).toBe(false);
    expect(areAdjacent('A3', 'A4', [4])).toBe(true);
    expect(areAdjacent('A5', 'A6', [4])).toBe(true);
  });

  test('findBlock returns the first run of seats together', () => {
    const available = ['A3', 'A1', 'A2', 'B1', 'B2', 'B3', 'B4'];
    expect(findBlock(available, 3)).toEqual(['A1', 'A2', 'A3']);
    expect(findBlock(available, 4)).toEqual(['B1', 'B2', 'B3', 'B4']);
    expect(findBlock(available, 5)).toBe(null);
    expect(findBlock(available, 1)).toEqual(['A1']);
    expect(findBlock(available, 0)).toEqual([]);
  });

  test('findBlock skips holes and row changes', () => {
    expect(findBlock(['C1', 'C2', 'C4', 'C5', 'C6'], 3)).toEqual(['C4', 'C5', 'C6']);
    expect(findBlock(['A9', 'B10'], 2)).toBe(null);
    expect(findBlock([], 2)).toBe(null);
  });

  test('countByRow tallies seats per row', () => {
    expect(countByRow(['A1', 'a2', 'B7', 'AA1'])).toEqual({ A: 2, B: 1, AA: 1 });
    expect(countByRow([])).toEqual({});
  });
});
