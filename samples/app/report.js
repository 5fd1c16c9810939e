// Plain JavaScript with node-postgres: the SQL string passed to client.query can be explained in place.
async function latestOrders(client) {
  const result = await client.query(`
    SELECT id, created_at FROM orders
    WHERE country_id = ANY ('{1,2,3}')
    ORDER BY created_at DESC
    LIMIT 10`);
  return result.rows;
}

module.exports = { latestOrders };
