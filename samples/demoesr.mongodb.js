// Equality, Sort, Range on the demoesr collection ({ e, s, r }, with the indexes e_1_s_1_r_1,
// e_1_r_1 and r_1_e_1). Explain each and compare keys examined, seeks and whether a SORT appears.

// Equality + range, no sort: the index { e: 1, r: 1 } reads exactly what it returns; { e: 1, s: 1, r: 1 }
// hops between s values (seeks > 1).
db.demoesr.find({ e: 42, r: { $gt: 64 } });

// Equality + sort + range: { e: 1, s: 1, r: 1 } returns in s order without a blocking sort.
db.demoesr.find({ e: 42, r: { $gt: 64 } }).sort({ s: 1 }).limit(10);

// $in with two values and a sort: explode-for-sort merges two index scans in order (SORT_MERGE).
db.demoesr.find({ e: { $in: [42, 7] }, r: { $gt: 64 } }).sort({ s: 1 }).limit(10);

// The same query forced onto { e: 1, r: 1 } with hint: it reads fewer keys here but sorts in memory (ERS).
db.demoesr.find({ e: 42, r: { $gt: 64 } }).sort({ s: 1 }).hint({ e: 1, r: 1 }).limit(10);
