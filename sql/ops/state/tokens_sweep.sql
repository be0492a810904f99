-- expired tokens never resolve again: their hashes go
delete from tokens where expires_ms <= $now_ms
