#!/bin/sh
# docker compose: runs once when the official postgres image creates its cluster, so the seat
# database reads the same settings file as the native stack (ALTER SYSTEM still wins).
set -e
echo "include '/etc/stagefront/postgres.conf'" >> "$PGDATA/postgresql.conf"
# The registry keeps its schemas here (the native launcher creates it the same way).
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" -c "create database stagefront_registry"
# Who may connect how, as natively: physical replication for the admin role only (read when the
# image restarts the server after its init scripts), and PUBLIC's CONNECT only on seat databases.
cp /etc/stagefront/pg_hba.conf "$PGDATA/pg_hba.conf"
for database in postgres template1 stagefront_registry; do
  psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" -c "revoke connect, temporary on database $database from public"
done
