-- Records the SDK uploads a batch file holds (src/load/uploads.ts), before the file is put in
-- place; they count as loaded once the batch file is (sql/ops/load/uploads_known.sql).
-- params: $keys VARCHAR[] (the uploads' SHA-256), $batch_key VARCHAR (the batch file's), $at TIMESTAMPTZ
insert into loaded_uploads
select unnest($keys), $batch_key, $at::timestamptz
