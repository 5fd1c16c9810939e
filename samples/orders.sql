-- PostgreSQL samples: right-click a statement and choose "Explain Query", or click "Explain" above it.
-- Load the data first: node samples/load-sample-data.mjs --pg <uri>

-- Orders of country 1 that contain product 5, newest first.
SELECT o.id, o.created_at
FROM orders o
JOIN order_details d ON d.order_id = o.id
WHERE o.country_id = 1 AND d.product_id = 5
ORDER BY o.created_at DESC
LIMIT 10;

-- OFFSET reads every row it skips: 10,000 + 20 index entries for 20 rows.
SELECT id, created_at FROM orders ORDER BY created_at DESC, id DESC OFFSET 10000 LIMIT 20;

-- Keyset pagination: continue after the last (created_at, id) seen; reads 20 entries.
SELECT id, created_at FROM orders
WHERE (created_at, id) < ('2024-01-08 00:00:00+00', 10000)
ORDER BY created_at DESC, id DESC
LIMIT 20;

-- = ANY(...) with ORDER BY ... LIMIT: PostgreSQL does not merge one index scan per value (no
-- explode-for-sort); it sorts, or walks the created_at index and filters out other countries' rows.
SELECT id, created_at FROM orders WHERE country_id = ANY ('{1,2,3}') ORDER BY created_at DESC LIMIT 10;

-- The UNION ALL rewrite reads ten rows per value and merges them without a sort.
(SELECT id, created_at FROM orders WHERE country_id = 1 ORDER BY created_at DESC LIMIT 10)
UNION ALL
(SELECT id, created_at FROM orders WHERE country_id = 2 ORDER BY created_at DESC LIMIT 10)
UNION ALL
(SELECT id, created_at FROM orders WHERE country_id = 3 ORDER BY created_at DESC LIMIT 10)
ORDER BY created_at DESC LIMIT 10;

-- Explained with ANALYZE, an UPDATE runs inside a transaction that is rolled back: nothing changes.
UPDATE orders SET country_id = country_id WHERE id < 100;
