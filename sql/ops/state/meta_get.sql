select value from state_meta where name = $name
