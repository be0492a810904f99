-- The connection's search path as the pool handed it out.
reset search_path
