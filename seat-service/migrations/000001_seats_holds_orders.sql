-- Shows, seats, holds and orders. A seat is one row whose state moves
-- available -> held -> sold (or back to available when a hold ends). The database itself
-- refuses an oversold seat: order_seats has the seat as its primary key, so a seat can belong
-- to one order only, and an active hold is unique per seat.

create table shows (
  show_id     text primary key,
  title       text not null,
  starts_at   timestamptz not null,
  on_sale_at  timestamptz not null
);

create table seats (
  seat_id      text primary key,
  show_id      text not null references shows (show_id),
  section      text not null,
  row_label    text not null,
  seat_number  int not null check (seat_number > 0),
  price_cents  int not null check (price_cents >= 0),
  state        text not null default 'available' check (state in ('available', 'held', 'sold')),
  updated_at   timestamptz not null default now(),
  unique (show_id, section, row_label, seat_number)
);
create index seats_show_state on seats (show_id, state);

create table holds (
  hold_id     uuid primary key,
  show_id     text not null references shows (show_id),
  buyer_id    text not null,
  created_at  timestamptz not null default now(),
  expires_at  timestamptz not null,
  status      text not null default 'active' check (status in ('active', 'released', 'expired', 'confirmed')),
  closed_at   timestamptz,
  check ((status = 'active') = (closed_at is null)),
  check (expires_at > created_at)
);
-- The sweeper's query: active holds past their expiry, oldest first.
create index holds_active_expiry on holds (expires_at) where status = 'active';

create table hold_seats (
  hold_id  uuid not null references holds (hold_id),
  seat_id  text not null references seats (seat_id),
  active   boolean not null default true,
  primary key (hold_id, seat_id)
);
-- At most one active hold per seat.
create unique index hold_seats_one_active_hold on hold_seats (seat_id) where active;

create table orders (
  order_id     uuid primary key,
  hold_id      uuid not null unique references holds (hold_id),
  show_id      text not null references shows (show_id),
  buyer_id     text not null,
  buyer_email  text not null,
  total_cents  int not null check (total_cents >= 0),
  currency     text not null default 'EUR',
  created_at   timestamptz not null default now()
);

create table order_seats (
  seat_id      text primary key references seats (seat_id),  -- a seat is sold once, ever
  order_id     uuid not null references orders (order_id),
  price_cents  int not null
);
create index order_seats_order on order_seats (order_id);
