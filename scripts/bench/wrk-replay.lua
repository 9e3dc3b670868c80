-- wrk script for scripts/bench-replay: requests cycle through N recorded URLs in absolute form.
--   wrk ... http://PROXY_HOST:PROXY_PORT/ -s wrk-replay.lua -- http://ORIGIN_HOST:ORIGIN_PORT/item/N
-- The last path segment is the count N: request k goes to .../item/<k mod N>.json, each thread
-- starting at its own offset. done() prints the line scripts/bench-http's run_wrk parses.

local prefix, count, next_index = nil, 1, 0
local thread_counter = 0

function setup(thread)
   thread:set("offset", thread_counter * 7919)
   thread_counter = thread_counter + 1
end

function init(args)
   local target = args[1]
   local p, n = target:match("^(%a[%w+.-]*://[^/]+/.*/)(%d+)$")
   if p == nil then
      error("bad target URL (want .../item/N): " .. target)
   end
   prefix, count = p, tonumber(n)
   wrk.headers["Host"] = target:match("^%a[%w+.-]*://([^/]+)")
   next_index = (offset or 0) % count
end

function request()
   local path = prefix .. next_index .. ".json"
   next_index = (next_index + 1) % count
   return wrk.format("GET", path)
end

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
