-- wrk script for scripts/bench-http.
--   wrk ... http://PROXY_HOST:PROXY_PORT/ -s wrk.lua -- http://ORIGIN_HOST:ORIGIN_PORT/path
-- With an argument, every request is sent in absolute form (proxy mode): the request line carries
-- the full URL and Host names the origin, while the TCP connection goes to the proxy.
-- Without an argument the URL given to wrk is requested directly (origin-form).
-- The request stays static (built once by wrk.init after init() returns), so this costs nothing
-- per request. done() prints one machine-readable line that scripts/bench-http parses.

function init(args)
   local target = args[1]
   if target ~= nil and target ~= "" then
      local hostport = target:match("^%a[%w+.-]*://([^/]+)")
      if hostport == nil then
         error("bad target URL: " .. target)
      end
      wrk.path = target
      wrk.headers["Host"] = hostport
   end
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
