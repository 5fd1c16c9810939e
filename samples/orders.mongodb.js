// MongoDB playground: right-click a query and choose "Explain Query", or click "Explain" above it.
// Load the data first: node samples/load-sample-data.mjs --mongo <uri>

// 1. The ten most recent orders of country 1 that contain product 5. The index
//    { country_id: 1, "order_details.product_id": 1, created_at: -1 } follows Equality, Sort, Range:
//    keys examined = documents examined = documents returned, and no blocking SORT.
db.orders.find({ country_id: 1, order_details: { $elemMatch: { product_id: 5 } } }).sort({ created_at: -1 }).limit(10);

// 2. Skip-based pagination reads every entry it skips: 2,000 + 20 keys for 20 documents (country 2 has
//    2,561 orders, so this page is full).
db.orders.find({ country_id: 2 }).sort({ created_at: -1 }).skip(2000).limit(20);

// 3. Keyset pagination: continue after the last created_at seen, and read only 20 keys.
db.orders.find({ country_id: 2, created_at: { $lt: ISODate('2024-01-10T00:00:00Z') } }).sort({ created_at: -1 }).limit(20);
