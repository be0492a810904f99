-- one request of weight $cost counted against $key: a new window starts when the last one ended
-- ($window_ms long); returns the count in the window and when the window began
insert into rate_counts (key, window_start_ms, count) values ($key, $now_ms, $cost)
on conflict (key) do update set
    count = case when rate_counts.window_start_ms + $window_ms <= $now_ms then $cost else rate_counts.count + $cost end,
    window_start_ms = case when rate_counts.window_start_ms + $window_ms <= $now_ms then $now_ms else rate_counts.window_start_ms end
returning count, window_start_ms
