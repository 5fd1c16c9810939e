import assert from 'node:assert/strict';
import { formatBytes, formatCompact, formatCount, formatKb, formatLimit, formatMs, formatPercent, formatRatio, formatSeconds, formatShare, plural, rowsPerLoopText, wasteRatio } from '../../src/core/format';

describe('format: one way to print each number', () => {
  it('prints counts with separators and fractions to the digit a reader can use', () => {
    assert.equal(formatCount(10_020), '10,020');
    assert.equal(formatCount(6956.95), '6,957');
    assert.equal(formatCount(99.96), '100');
    assert.equal(formatCount(12.34), '12.3');
    assert.equal(formatCount(6.95), '6.95');
    assert.equal(formatCount(0.5), '0.5');
    assert.equal(formatCount(-1234), '-1,234');
    assert.equal(formatCount(-0.001), '0');
  });

  it('shortens only large counts on cards', () => {
    assert.equal(formatCompact(99_999), '99,999');
    assert.equal(formatCompact(759_349), '759k');
    assert.equal(formatCompact(1_234_567), '1.23M');
  });

  it('prints durations, sizes, ratios and shares', () => {
    assert.equal(formatMs(0.0421), '0.042 ms');
    assert.equal(formatMs(1.254), '1.25 ms');
    assert.equal(formatMs(412.4), '412 ms');
    assert.equal(formatMs(1240), '1.24 s');
    assert.equal(formatMs(185_000), '3 m 05 s');
    assert.equal(formatMs(119_700), '2 m 00 s');
    assert.equal(formatBytes(512), '512 B');
    assert.equal(formatKb(2048), '2 MB');
    assert.equal(formatRatio(1.64), '1.6x');
    assert.equal(formatRatio(9.97), '10x');
    assert.equal(formatRatio(1001.2), '1,001x');
    assert.equal(formatRatio(Infinity), 'no end');
    assert.equal(formatPercent(1, 2000), '');
    assert.equal(formatPercent(4, 1000), '0.4%');
    assert.equal(formatPercent(120, 1000), '12%');
    assert.equal(plural(1, 'row'), '1 row');
    assert.equal(plural(2000, 'document'), '2,000 documents');
  });

  it('says a share the sentence needs even where it is tiny, and a setting the way a measured share reads', () => {
    assert.equal(formatShare(0.3), '30%');
    assert.equal(formatShare(0.123), '12%');
    assert.equal(formatShare(0.004), '0.4%');
    assert.equal(formatShare(0.0004), 'under 0.1%');
    assert.equal(formatShare(0), '0%');
    assert.equal(formatShare(12.5), '1,250%');
    assert.equal(formatPercent(123, 1000), formatShare(0.123));
  });

  it('reads a limit back as it was set, and a time waited to a tenth of a second', () => {
    assert.equal(formatLimit(3000), '3 s');
    assert.equal(formatLimit(1500), '1500 ms');
    assert.equal(formatLimit(undefined), 'configured');
    assert.equal(formatSeconds(3740), '3.7 s');
    assert.equal(formatSeconds(3000), '3 s');
    assert.equal(formatSeconds(12_040), '12 s');
  });

  it('states read over kept the same way for a card and a finding: nothing kept counts as one', () => {
    assert.equal(wasteRatio(6957, 7), 6957 / 7);
    assert.equal(wasteRatio(20_000, 0), 20_000);
  });

  it('says rows per loop in words', () => {
    assert.equal(rowsPerLoopText(6.95, 695), 'about 7 rows on each of 695 loops');
    assert.equal(rowsPerLoopText(3, 10), '3 rows on each of 10 loops');
    assert.equal(rowsPerLoopText(1, 4), '1 row on each of 4 loops');
    assert.equal(rowsPerLoopText(2.5, 4), '2.5 rows on each of 4 loops');
    assert.equal(rowsPerLoopText(0.01, 695), 'about 7 rows in all over 695 loops');
    assert.equal(rowsPerLoopText(0.25, 4), '1 row in all over 4 loops');
    assert.equal(rowsPerLoopText(0, 12), 'no rows on 12 loops');
    assert.equal(rowsPerLoopText(42, 1), '42 rows');
  });
});
