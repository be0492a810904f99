-- the next post's number
update state_versions set version = version + 1 where name = 'cell_counts' returning version
