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

-- done(): the BENCH_RESULT line, shared with the other wrk scripts.
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "bench-result.lua")
