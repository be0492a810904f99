-- windows that ended: their keys start afresh at their next request anyway
delete from rate_counts where window_start_ms + $window_ms <= $now_ms
