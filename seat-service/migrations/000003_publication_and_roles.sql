-- Least privilege. Roles are cluster-wide, so they are created here only when missing, without a
-- password (NOLOGIN); `npm run seat-service -- setup-roles` gives them LOGIN and passwords.
--   stagefront_service:  the seat service; business tables and the outbox, nothing else.
--   stagefront_debezium: REPLICATION and SELECT on the outbox only.
do $$
begin
  if not exists (select 1 from pg_roles where rolname = 'stagefront_service') then
    create role stagefront_service nologin;
  end if;
  if not exists (select 1 from pg_roles where rolname = 'stagefront_debezium') then
    create role stagefront_debezium nologin replication;
  end if;
end
$$;

grant usage on schema public to stagefront_service, stagefront_debezium;
grant select, insert, update, delete on shows, seats, holds, hold_seats, orders, order_seats, outbox, job_runs
  to stagefront_service;
grant select on outbox to stagefront_debezium;

-- The publication is ours, so the connector's role needs no table ownership
-- (publication.autocreate.mode=disabled). Inserts only: retention purges never reach Kafka.
create publication stagefront_outbox for table outbox with (publish = 'insert');
