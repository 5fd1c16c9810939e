// Prisma Client: raw queries are read as the SQL they send, and prisma/schema.prisma tells the language
// server which keys exist.
import { PrismaClient } from '@prisma/client';

const prisma = new PrismaClient();

// A deep page: OFFSET reads and throws away 2,000 rows first.
export async function latestInCountry() {
  return prisma.$queryRaw`SELECT id, created_at FROM orders WHERE country_id = 7 ORDER BY created_at DESC OFFSET 2000 LIMIT 20`;
}

// The primary key order_details_pkey (order_id, line) serves this one.
export async function orderLine() {
  return prisma.$queryRaw`SELECT product_id, quantity FROM order_details WHERE order_id = 42 AND line = 1`;
}

// The model OrderDetail is mapped to order_details (schema.prisma): the SQL explained names the table
// and its columns, and the same primary key serves it.
export async function linesOfOrder() {
  return prisma.orderDetail.findMany({ where: { orderId: 42 }, orderBy: { line: 'asc' } });
}
