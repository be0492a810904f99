-- whether a cell is given new drivers (jobs/cells.js close / open)
update cells set accepting = $accepting where name = $name
