-- Uploads the load has written durably into its landing area: no longer waiting.
-- params: $seqs TEXT (a JSON array of seq numbers)
delete from uploads.waiting
where seq in (select value::bigint from json_array_elements_text($seqs::json));
