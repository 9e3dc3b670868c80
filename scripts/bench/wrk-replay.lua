-- wrk script for scripts/bench-replay: requests cycle through N URLs in absolute form.
--   wrk ... http://PROXY_HOST:PROXY_PORT/ -s wrk-replay.lua -- 'http://ORIGIN_HOST:ORIGIN_PORT/item/{}.json#N'
-- The target is a URL template and a count: request k goes to the template with {} replaced by
-- k mod N (`/item/{}.json`, `/search?k={}`), each thread starting at its own offset. done()
-- prints the line scripts/bench-http's run_wrk parses.

local head, tail, count, next_index = nil, nil, 1, 0
local thread_counter = 0

function setup(thread)
   thread:set("offset", thread_counter * 7919)
   thread_counter = thread_counter + 1
end

function init(args)
   local target = args[1]
   local h, t, n = target:match("^(%a[%w+.-]*://[^/]+/[^{]*){}([^#]*)#(%d+)$")
   if h == nil then
      error("bad target (want a URL with {} and #N): " .. target)
   end
   head, tail, count = h, t, tonumber(n)
   wrk.headers["Host"] = target:match("^%a[%w+.-]*://([^/]+)")
   next_index = (offset or 0) % count
end

function request()
   local path = head .. next_index .. tail
   next_index = (next_index + 1) % count
   return wrk.format("GET", path)
end

-- done(): the BENCH_RESULT line, shared with the other wrk scripts.
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "bench-result.lua")
