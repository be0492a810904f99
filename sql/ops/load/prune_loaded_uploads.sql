-- Forgets the SDK uploads recorded before $oldest (the landing archive's retention): their batch
-- files, the only copies, are gone with it.
-- params: $oldest TIMESTAMPTZ
delete from loaded_uploads where recorded_at < $oldest::timestamptz
