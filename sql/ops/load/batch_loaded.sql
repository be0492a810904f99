-- grain: one row when a batch file of this name was loaded (its ledger row names its path)
-- reads: loaded_files
-- params: $name VARCHAR (the batch file's name)
select 1 as loaded
from loaded_files
where parse_filename(path) = $name
limit 1
