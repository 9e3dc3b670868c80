-- wrk script for scripts/bench-replay's query-keyed row: requests cycle through N URLs on one
-- path told apart by a query item.
--   wrk ... http://PROXY_HOST:PROXY_PORT/ -s wrk-replay-query.lua -- http://ORIGIN_HOST:ORIGIN_PORT/search/N
-- Request k goes to .../search?k=<k mod N>, each thread starting at its own offset.

local prefix, count, next_index = nil, 1, 0
local thread_counter = 0

function setup(thread)
   thread:set("offset", thread_counter * 7919)
   thread_counter = thread_counter + 1
end

function init(args)
   local target = args[1]
   local p, n = target:match("^(%a[%w+.-]*://[^/]+/.*)/(%d+)$")
   if p == nil then
      error("bad target URL (want .../search/N): " .. target)
   end
   prefix, count = p .. "?k=", tonumber(n)
   wrk.headers["Host"] = target:match("^%a[%w+.-]*://([^/]+)")
   next_index = (offset or 0) % count
end

function request()
   local path = prefix .. next_index
   next_index = (next_index + 1) % count
   return wrk.format("GET", path)
end

dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "bench-result.lua")
