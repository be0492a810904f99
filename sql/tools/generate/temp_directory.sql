-- Where the generator's spills go: beside the output, removed at the end (DuckDB's default is
-- ./.tmp of the caller). The folder goes in for dir as a quoted literal (SET takes no parameter).
set temp_directory = {{dir}}
