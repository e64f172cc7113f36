#!/bin/sh
# docker compose: runs once when the official postgres image creates its cluster, so the seat
# database reads the same settings file as the native stack (ALTER SYSTEM still wins).
set -e
echo "include '/etc/stagefront/postgres.conf'" >> "$PGDATA/postgresql.conf"
# The registry keeps its schemas here (the native launcher creates it the same way).
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" -c "create database stagefront_registry"
