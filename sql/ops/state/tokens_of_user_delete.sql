-- a deleted account's tokens: their hashes go with the DELETE (secure_delete zeroes the bytes)
delete from tokens where platform_user_id = $platform_user_id and app_id = $app_id
