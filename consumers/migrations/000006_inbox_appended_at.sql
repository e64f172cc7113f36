-- When Kafka appended the record (its timestamp, the time Connect produced it), kept beside
-- received_at so the path from commit to effect can be split into stages: the outbox row's
-- created_at → appended_at is Debezium, Connect and the broker; appended_at → received_at is the
-- consumer's fetch and decode. Rows from before this column have no value.
alter table inbox add column appended_at timestamptz;
