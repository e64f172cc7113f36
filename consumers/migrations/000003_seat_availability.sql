-- Seat availability read model: one row per seat seen in a seat.* event, with its state. A seat
-- never seen counts as available before its first event. Counts per show and section are
-- derived from the seat rows (the view), so they can never drift from the seat states.
create table seat_availability_seats (
  seat_id         text primary key,
  show_id         text not null,
  section         text not null,
  state           text not null check (state in ('available', 'held', 'sold')),
  hold_id         text,
  order_id        text,
  last_event_id   text not null,
  last_event_at   timestamptz not null,
  updated_at      timestamptz not null default now()
);
create index seat_availability_seats_section on seat_availability_seats (show_id, section, state);

create view seat_availability_sections as
  select show_id,
         section,
         count(*) filter (where state = 'available')::int as available,
         count(*) filter (where state = 'held')::int      as held,
         count(*) filter (where state = 'sold')::int      as sold
    from seat_availability_seats
   group by show_id, section;
