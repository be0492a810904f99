-- One accepted upload, and a wake-up for the job machine's load (delivered at commit). A name
-- already waiting is left as it is (a partner file's records forwarded to their cell again after a
-- load was cut short: the same name, the same bytes).
-- params: $name TEXT, $app TEXT, $accepted_at TIMESTAMPTZ, $content BYTEA, $cell TEXT (null: any load)
with put as (
    insert into uploads.waiting (name, app_id, accepted_at, content, cell)
    values ($name, $app, $accepted_at, $content, $cell)
    on conflict (name) do nothing
    returning seq
)
select seq, pg_notify('driving_uploads', coalesce($cell::text, '')) as notified from put;
