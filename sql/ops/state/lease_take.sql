-- takes or renews lease $name for $holder until $expires_ms: one row changed when it is $holder's,
-- none while another holder's lease runs (expires_ms > $now_ms)
insert into leases (name, holder, expires_ms) values ($name, $holder, $expires_ms)
on conflict (name) do update set holder = excluded.holder, expires_ms = excluded.expires_ms
where leases.holder = excluded.holder or leases.expires_ms <= $now_ms
