-- params: $app_id, $created_at, $doc (the App as JSON)
insert into apps (app_id, created_at, doc) values ($app_id, $created_at, $doc)
on conflict (app_id) do update set doc = excluded.doc
