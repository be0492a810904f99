-- grain: one row per line of one NDJSON file (gzip read transparently), in file order
-- params: $path VARCHAR
-- A line (at most 32 MiB: a day-long trip at 1 Hz is about 6 MiB) is read whole (a 4-byte delimiter no JSON line contains) so every record keeps its line
-- number for the quarantine, and a malformed line never stops the file.
select
    row_number() over () as line_no,
    line
from read_csv(
    $path,
    columns = {'line': 'VARCHAR'},
    delim = chr(1) || chr(2) || chr(3) || chr(4),
    quote = '', escape = '', header = false, auto_detect = false,
    new_line = '\r\n', strict_mode = false, max_line_size = 33554432
)
