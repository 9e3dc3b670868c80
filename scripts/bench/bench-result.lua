-- done() for the wrk scripts (wrk.lua, wrk-replay.lua): one machine-readable line that
-- scripts/bench-http's run_wrk parses. Loaded with dofile from the script's own folder.

function done(summary, latency, requests)
   local e = summary.errors
   io.write(string.format(
      "BENCH_RESULT requests=%d duration_us=%d bytes=%d p50_us=%.1f p90_us=%.1f p99_us=%.1f " ..
      "max_us=%.1f mean_us=%.1f err_connect=%d err_read=%d err_write=%d err_status=%d err_timeout=%d\n",
      summary.requests, summary.duration, summary.bytes,
      latency:percentile(50), latency:percentile(90), latency:percentile(99),
      latency.max, latency.mean,
      e.connect, e.read, e.write, e.status, e.timeout))
end
