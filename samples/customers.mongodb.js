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
