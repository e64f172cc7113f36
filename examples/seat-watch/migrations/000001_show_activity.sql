-- Seat watch's read model: per show and section, how many seats were held, how many holds ended
-- without a sale (released or expired) and how many seats were sold. Created in the consumer's
-- own schema, seat_watch (the runtime runs this file with search_path = seat_watch).
create table show_activity (
  show_id     text   not null,
  section     text   not null,
  held        bigint not null default 0,
  hold_ended  bigint not null default 0,
  sold        bigint not null default 0,
  updated_at  timestamptz not null default now(),
  primary key (show_id, section)
);
