// Runs once, when the mongo container initialises an empty data directory: a read-only user for
// Argus (it never writes, and with this role it cannot).
db.getSiblingDB("admin").createUser({
  user: process.env.ARGUS_MONGO_USER,
  pwd: process.env.ARGUS_MONGO_PASSWORD,
  roles: [{ role: "read", db: "shop" }],
});
