// A Mongoose model: the schema declares the indexes the customers collection has, and the language
// server takes them as the existing ones when no connection is bound (the hover says which file).
const mongoose = require('mongoose');

const customerSchema = new mongoose.Schema({
  customer_id: { type: Number, unique: true },
  status: String,
  name: String,
  contact: {
    email: { type: String, index: true },
  },
});

const Customer = mongoose.model('Customer', customerSchema);

// Pending customers a page at a time: skip() reads every page before the one asked for.
async function pendingPage(page) {
  return Customer.find({ status: 'pending' }).sort({ name: 1 }).skip(page * 50).limit(50);
}

// One customer by email: the contact.email index the schema declares serves it.
async function byEmail() {
  return Customer.findOne({ 'contact.email': 'zbekmtjjus.12@example.com' });
}

module.exports = { Customer, pendingPage, byEmail };
