-- The deadline-hour read mix for bench/load.py, driven by wrk (a C load generator: on the same
-- two cores it costs a fraction of what a Python generator does, so it is never the limit).
-- Each request is one student's, with a session drawn at random from LOAD_SESSIONS (one per
-- line), and each thread walks the mix (dashboard, slack page, node page, slack/me, question
-- sets) in turn, so every page gets a fifth of the requests. LOAD_PATHS (space-separated) replaces the mix, e.g. a floor's single page;
-- LOAD_ANONYMOUS=1 sends no cookie. Only a 200 counts: a redirect to the log-in page is a
-- failure, not a fast page.
local threads = {}
local counter = 0

function setup(thread)
  counter = counter + 1
  thread:set("id", counter)
  table.insert(threads, thread)
end

function init(args)
  local code = os.getenv("LOAD_COURSE") or "ee290-sp26"
  paths = {}
  local only = os.getenv("LOAD_PATHS")
  if only and only ~= "" then
    for p in string.gmatch(only, "%S+") do
      table.insert(paths, (string.gsub(p, "{code}", code)))
    end
  else
    paths = {
      "/c/" .. code .. "/",
      "/c/" .. code .. "/slack/",
      "/c/" .. code .. "/node/",
      "/api/v1/courses/" .. code .. "/slack/me/",
      "/c/" .. code .. "/questions/",
    }
  end
  sessions = {}
  if os.getenv("LOAD_ANONYMOUS") ~= "1" then
    for line in io.lines(os.getenv("LOAD_SESSIONS")) do
      table.insert(sessions, line)
    end
  end
  math.randomseed(id * 7919)
  i = math.random(#paths)
  not_ok = 0
end

function request()
  i = i % #paths + 1
  local headers = {}
  if #sessions > 0 then
    headers["Cookie"] = "sessionid=" .. sessions[math.random(#sessions)]
  end
  return wrk.format("GET", paths[i], headers)
end

function response(status, headers, body)
  if status ~= 200 then
    not_ok = not_ok + 1
  end
end

function done(summary, latency, requests)
  local bad = 0
  for _, t in ipairs(threads) do
    bad = bad + t:get("not_ok")
  end
  io.write(string.format(
    'WRK_JSON {"requests": %d, "seconds": %.3f, "p50_ms": %.2f, "p99_ms": %.2f, "not_200": %d, "socket_errors": %d}\n',
    summary.requests, summary.duration / 1e6, latency:percentile(50) / 1000,
    latency:percentile(99) / 1000, bad,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
