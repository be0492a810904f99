-- grain: the slice a ledger key names, if it is one (loaded_slices); no row for a file loaded whole
-- params: $file_key VARCHAR
select source_key, source_path, start_byte, end_byte, first_line
from loaded_slices
where file_key = $file_key
