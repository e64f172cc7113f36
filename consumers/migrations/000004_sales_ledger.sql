-- Sales ledger: totals per show (and currency) from order.confirmed, maintained by the
-- consumer in the same transaction as its inbox rows. `recompute` compares it with the seat
-- database's orders and order_seats.
create table sales_ledger_totals (
  show_id      text not null,
  currency     text not null,
  orders       int not null default 0,
  seats        int not null default 0,
  total_cents  bigint not null default 0,
  updated_at   timestamptz not null default now(),
  primary key (show_id, currency)
);
