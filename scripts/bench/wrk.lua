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

-- done(): the BENCH_RESULT line, shared with the other wrk scripts.
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "bench-result.lua")
