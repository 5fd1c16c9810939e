// Application code: the extension finds the queries in driver calls and offers "Explain" above them.
import type { Db } from 'mongodb';
import type { Pool } from 'pg';

export async function recentOrdersWithProduct(db: Db) {
  return db.collection('orders').find({ country_id: 1, order_details: { $elemMatch: { product_id: 5 } } }).sort({ created_at: -1 }).limit(10).toArray();
}

export async function customerByEmail(db: Db) {
  return db.collection('customers').aggregate([{ $project: { name: 1, email: '$contact.email' } }, { $match: { email: 'zbekmtjjus.12@example.com' } }]).toArray();
}

export async function ordersPage(pool: Pool) {
  const { rows } = await pool.query('SELECT id, created_at FROM orders ORDER BY created_at DESC, id DESC OFFSET $1 LIMIT $2', [10000, 20]);
  return rows;
}
