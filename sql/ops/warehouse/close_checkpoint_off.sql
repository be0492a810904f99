-- The warehouse's writes stay in the write-ahead log at close, which the next open replays
-- (src/warehouse/close-checkpoint.ts says when that is cheaper than a checkpoint).
pragma disable_checkpoint_on_shutdown
