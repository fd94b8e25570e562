package resilienceredis

import "github.com/redis/go-redis/v9"

// The shared state of a breaker is one hash, so that every script touches
// one key: a Redis Cluster keeps it whole on one node, and a slot that is
// being moved (resharding) holds it on one side or the other, never in
// part (a script of several keys would get TRYAGAIN while some of them
// have moved, or do not exist yet):
//
//	Prefix+"br:{name}"  hash: ep, gen, st, until, streak, ok, trials,
//	                    rules, wn, and the window's buckets wtJ wsJ wfJ wwJ
//
// ep (the epoch) is a random number drawn when the state is created: a
// state that vanished (FLUSHALL, DEL, an eviction, a restart without
// persistence) and is created again has a new epoch, and the instances
// take it as new whatever its generation. gen is the generation, bumped by
// every transition; st is 0 closed, 1 open, 2 half-open; until is the end
// of the cooldown while open; streak the consecutive failures while
// closed; ok the successful trials while half-open; trials the trials out
// while half-open, "member expiry member expiry ...". The trials are kept
// in the state's own hash: the state and its trials are lost together or
// not at all, so a lost trial record never admits more than MaxTrials.
// rules are the instances' rules fingerprints, one a line, each after the
// time it was last seen ("µs fingerprint"), those not seen within the
// horizon dropped. The window is wn buckets (the most any instance uses):
// bucket J holds its index in time (wtJ) and its successes, failures and
// slow calls (wsJ, wfJ, wwJ); a transition deletes them.
// Times are in microseconds of the server's clock (TIME), plus ARGV[4], a
// shift that only tests set.
//
// Every script starts with the prelude: it reads the state (creating it if
// missing, with the epoch ARGV[5] the instance drew, and publishing it),
// notes the instance's rules (ARGV[6], a fingerprint) and finds another
// instance's rules seen within ARGV[7] µs, makes the transitions that time
// has made due (an open breaker whose cooldown has ended turns half-open;
// a half-open breaker whose oldest trial has expired opens again), and
// then does its own work. A script that changes the state bumps the
// generation and publishes the new state on the channel ARGV[1] ("ep gen
// st remaining-µs"), so that every instance learns it at once. Scripts
// that apply an instance's outcomes are fenced: they take the generation
// and epoch the instance saw and do nothing if the state is not that one,
// so a stale instance never writes over a newer state; counts are added
// inside the script, so no two instances' updates are lost.
//
// Every script replies {ep, gen, st, remaining µs, verdict, rules}:
// remaining is the rest of the cooldown while open, the time to the first
// trial's expiry while half-open; rules is another instance's rules
// fingerprint, or "". ep is a decimal string.
const prelude = `
local H, ch = KEYS[1], ARGV[1]
local cooldown, trialTimeout = tonumber(ARGV[2]), tonumber(ARGV[3])
local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2] + tonumber(ARGV[4])
local s = redis.call('HMGET', H, 'ep', 'gen', 'st', 'until')
local ep, gen, st, untl = s[1], tonumber(s[2]), tonumber(s[3]), tonumber(s[4])
if not ep then
	ep, gen, st, untl = ARGV[5], 1, 0, 0
	redis.call('HSET', H, 'ep', ep, 'gen', 1, 'st', 0, 'until', 0, 'streak', 0, 'ok', 0, 'trials', '')
	redis.call('PUBLISH', ch, ep .. ' 1 0 0')
end
local rules = ''
do
	local fp, horizon = ARGV[6], tonumber(ARGV[7])
	local kept = {string.format('%d', now) .. ' ' .. fp}
	for at, f in string.gmatch(redis.call('HGET', H, 'rules') or '', '(%-?%d+) ([^\n]+)') do
		if f ~= fp and tonumber(at) >= now - horizon then
			kept[#kept + 1] = at .. ' ' .. f
			rules = f
		end
	end
	redis.call('HSET', H, 'rules', table.concat(kept, '\n'))
end
local function trials()
	local list = {}
	for m, e in string.gmatch(redis.call('HGET', H, 'trials') or '', '(%S+) (%S+)') do
		list[#list + 1] = {m, tonumber(e)}
	end
	return list
end
local function putTrials(list)
	local parts = {}
	for _, x in ipairs(list) do parts[#parts + 1] = x[1] .. ' ' .. string.format('%d', x[2]) end
	redis.call('HSET', H, 'trials', table.concat(parts, ' '))
end
local function firstExpiry()
	local first
	for _, x in ipairs(trials()) do
		if not first or x[2] < first then first = x[2] end
	end
	return first
end
local function remaining()
	if st == 1 then return untl - now end
	if st == 2 then
		local first = firstExpiry()
		if first then return first - now end
	end
	return 0
end
local function clearWindow()
	local n = tonumber(redis.call('HGET', H, 'wn')) or 0
	if n == 0 then return end
	local f = {}
	for j = 0, n - 1 do
		f[4 * j + 1], f[4 * j + 2], f[4 * j + 3], f[4 * j + 4] = 'wt' .. j, 'ws' .. j, 'wf' .. j, 'ww' .. j
	end
	redis.call('HDEL', H, unpack(f))
end
local function set(to, u)
	gen, st, untl = gen + 1, to, u
	clearWindow()
	redis.call('HSET', H, 'gen', gen, 'st', st, 'until', string.format('%d', u), 'streak', 0, 'ok', 0, 'trials', '')
	redis.call('PUBLISH', ch, string.format('%s %d %d %d', ep, gen, st, remaining()))
end
local function reply(verdict)
	return {ep, gen, st, remaining(), verdict, rules}
end
for _ = 1, 8 do
	if st == 1 and now >= untl then
		set(2, 0)
	elseif st == 2 then
		local first = firstExpiry()
		if first and first <= now then
			set(1, first + cooldown)
		else
			break
		end
	else
		break
	end
end
`

// readScript reads the state: ARGV as the prelude's.
var readScript = redis.NewScript(prelude + `
return reply(0)
`)

// resetScript closes the breaker in a new generation.
var resetScript = redis.NewScript(prelude + `
set(0, 0)
return reply(0)
`)

// flushScript applies a batch of outcomes of calls admitted while closed.
// ARGV[8], ARGV[9]: the generation and epoch the batch counts for
// (generation 0: an instance that has not learnt the state yet, whose
// calls count for the current generation if it is closed);
// ARGV[10..15]: successes, failures, slow calls, failures before the first
// success, the longest run of failures, failures after the last success
// (all in call order within the batch); ARGV[16..21]: threshold (0 off),
// failure ratio and slow-call ratio (0 off), min calls, bucket width µs,
// buckets. Verdict 1 if the batch was applied, 0 if the state is not the
// one it was counted for (the instance then takes the state replied, and
// sends the batch again if it was counted for a state the instance no
// longer holds as the shared one: another epoch, or a generation the state
// went back from). The streak at its peak within the batch is the streak
// before it plus the failures before its first success, or its longest run
// of failures, whichever is more: the consecutive rule sees every failure
// in the order the batches reach Redis.
var flushScript = redis.NewScript(prelude + `
local g = tonumber(ARGV[8])
if st ~= 0 or g ~= 0 and (gen ~= g or ep ~= ARGV[9]) then return reply(0) end
local succ, fail, slw = tonumber(ARGV[10]), tonumber(ARGV[11]), tonumber(ARGV[12])
local lead, run, trail = tonumber(ARGV[13]), tonumber(ARGV[14]), tonumber(ARGV[15])
local threshold, fr, sr, minCalls = tonumber(ARGV[16]), tonumber(ARGV[17]), tonumber(ARGV[18]), tonumber(ARGV[19])
local width, buckets = tonumber(ARGV[20]), tonumber(ARGV[21])
local streak = tonumber(redis.call('HGET', H, 'streak')) or 0
local peak = math.max(streak + lead, run)
if succ > 0 then streak = trail else streak = streak + fail end
redis.call('HSET', H, 'streak', streak)
local idx = math.floor(now / width)
local j = idx % buckets
if buckets > (tonumber(redis.call('HGET', H, 'wn')) or 0) then redis.call('HSET', H, 'wn', buckets) end
if tonumber(redis.call('HGET', H, 'wt' .. j)) ~= idx then
	redis.call('HSET', H, 'wt' .. j, idx, 'ws' .. j, 0, 'wf' .. j, 0, 'ww' .. j, 0)
end
redis.call('HINCRBY', H, 'ws' .. j, succ)
redis.call('HINCRBY', H, 'wf' .. j, fail)
redis.call('HINCRBY', H, 'ww' .. j, slw)
if fail == 0 and slw == 0 then return reply(1) end
local trip = threshold > 0 and peak >= threshold
if not trip and (fr > 0 or sr > 0) then
	local names = {}
	for k = 0, buckets - 1 do
		names[4 * k + 1], names[4 * k + 2], names[4 * k + 3], names[4 * k + 4] = 'wt' .. k, 'ws' .. k, 'wf' .. k, 'ww' .. k
	end
	local v = redis.call('HMGET', H, unpack(names))
	local calls, fails, slows = 0, 0, 0
	for k = 0, buckets - 1 do
		local b = tonumber(v[4 * k + 1])
		if b and b > idx - buckets then
			calls = calls + tonumber(v[4 * k + 2]) + tonumber(v[4 * k + 3])
			fails = fails + tonumber(v[4 * k + 3])
			slows = slows + tonumber(v[4 * k + 4])
		end
	end
	if calls >= minCalls and calls > 0 then
		trip = fr > 0 and fails / calls >= fr or sr > 0 and slows / calls >= sr
	end
end
if trip then set(1, now + cooldown) end
return reply(1)
`)

// acquireScript asks for a half-open trial. ARGV[8]: the trial's member
// name; ARGV[9]: MaxTrials. Verdict 1: closed, admit as a closed call;
// 2: a trial, admitted; 0: refused (open, or MaxTrials trials out).
var acquireScript = redis.NewScript(prelude + `
if st == 0 then return reply(1) end
if st == 1 then return reply(0) end
local list = trials()
if #list < tonumber(ARGV[9]) then
	list[#list + 1] = {ARGV[8], now + trialTimeout}
	putTrials(list)
	return reply(2)
end
return reply(0)
`)

// reportScript reports a trial's outcome. ARGV[8], ARGV[9]: the
// generation and epoch of the trial; ARGV[10]: its member name; ARGV[11]:
// 0 success, 1 failure or slow, 2 ignored; ARGV[12]: SuccessThreshold.
// Verdict 1 if the report counted; 0 if the trial had expired or the
// state had moved on.
var reportScript = redis.NewScript(prelude + `
if st ~= 2 or gen ~= tonumber(ARGV[8]) or ep ~= ARGV[9] then return reply(0) end
local list, out = trials(), false
for i, x in ipairs(list) do
	if x[1] == ARGV[10] then
		table.remove(list, i)
		out = true
		break
	end
end
if not out then return reply(0) end
putTrials(list)
local o = tonumber(ARGV[11])
if o == 1 then
	set(1, now + cooldown)
elseif o == 0 and redis.call('HINCRBY', H, 'ok', 1) >= tonumber(ARGV[12]) then
	set(0, 0)
end
return reply(1)
`)
