-- Attempt counts that only grow. A try is `started` before it runs; when it comes back (failed
-- as poison, failed by the infrastructure, abandoned at a rebalance or a stop) its number is added
-- to `finished`, and a poison failure also adds one to `poison_failures`. What counts against a
-- record is poison_failures + started - cardinality(finished): its poison failures and the tries
-- the process died in. Nothing is ever taken back, so a finish that could not be written (the
-- database was down) is written later, at once with the next start, and a finish written twice
-- (an answer lost after its commit) is still one finish.
alter table delivery_attempts
  add column started int not null default 0,
  add column finished int[] not null default '{}',
  add column poison_failures int not null default 0;

-- Rows from before: a row with a poison reason counted poison failures, any other a try that did
-- not finish.
update delivery_attempts
   set started = attempts,
       finished = case when last_reason is null then '{}' else array(select generate_series(1, attempts)) end,
       poison_failures = case when last_reason is null then 0 else attempts end;

-- `attempts` is no longer written. It stays (with a default) so a consumer of the previous
-- version still running during a rolling upgrade keeps working.
alter table delivery_attempts alter column attempts set default 0;
