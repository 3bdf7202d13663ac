'use strict';

const money = require('./money');
const seats = require('./seats');
const schedule = require('./schedule');
const pricing = require('./pricing');
const text = require('./text');
const query = require('./query');

module.exports = {
  money,
  seats,
  schedule,
  pricing,
  text,
  query,
  ...money,
  ...seats,
  ...schedule,
  ...pricing,
  ...text,
  ...query,
};
