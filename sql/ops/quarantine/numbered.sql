-- grain: one row per quarantined record line or event, with the id the operator types
-- A record is named by its load batch and line (`12-345`); the events quarantined from one line
-- by their order within it (`12-345-e1`). Ids stay the same until the file is re-derived
-- (load.js --rederive gives it a new batch). The view is a temp one: the warehouse is opened
-- read-only.
create or replace temp view quarantine_numbered as
with numbered as (
    select
        *,
        row_number() over (partition by batch_id, line_no, kind order by reason, raw) as nth
    from quarantine
)

select
    case
        when kind = 'record' then batch_id::varchar || '-' || line_no::varchar
        else batch_id::varchar || '-' || line_no::varchar || '-e' || nth::varchar
    end as id,
    -- every column of the quarantine, so a warehouse not yet given a newer column (detail: a
    -- read-only open does not migrate) is read as it is
    * exclude (nth)
from numbered
