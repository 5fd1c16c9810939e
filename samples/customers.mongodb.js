// $project (or $addFields) before $match hides the index on contact.email: the renamed field "email"
// is matched after the projection, so the whole collection is scanned.
db.customers.aggregate([
  { $project: { name: 1, email: '$contact.email' } },
  { $match: { email: 'zbekmtjjus.12@example.com' } },
]);

// Matching on the original dotted path first lets the index { "contact.email": 1 } serve it.
db.customers.aggregate([
  { $match: { 'contact.email': 'zbekmtjjus.12@example.com' } },
  { $project: { name: 1, email: '$contact.email' } },
]);

// No index serves this one yet: status is an equality, created the sort, score a range (Equality, Sort,
// Range). The suggestion names the index; Verify tries it on a sample, Create Index builds it, and the
// lens and the squiggles above follow.
db.customers.find({ status: 'pending', score: { $gt: 900 } }).sort({ created: -1 }).limit(10);
