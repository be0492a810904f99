-- drivers given to (or moved into, or out of: $n negative) a cell
update cells set drivers = drivers + $n where name = $name
