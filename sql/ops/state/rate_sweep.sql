-- rows older than the longest window: their windows ended, and their keys start afresh at their next request
delete from rate_counts where window_start_ms + $window_ms <= $now_ms
