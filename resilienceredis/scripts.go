package resilienceredis

import "github.com/redis/go-redis/v9"

// The shared state of a breaker is three keys with one hash tag, so that a
// Redis Cluster keeps them on one node and a script may use them all:
//
//	Prefix+"br:{name}"         hash: ep, gen, st, until, streak, ok
//	Prefix+"br:{name}:trials"  sorted set: outstanding trials, by expiry
//	Prefix+"br:{name}:window"  hash: the buckets of the shared window
//
// ep (the epoch) is the server's time when the state was created: a state
// lost with a crashed server and created again has a new epoch, and the
// instances take it as new whatever its generation. gen is the generation,
// bumped by every transition; st is 0 closed, 1 open, 2 half-open; until
// is the end of the cooldown while open; streak the consecutive failures
// while closed; ok the successful trials while half-open. Times are in
// microseconds of the server's clock (TIME), plus ARGV[4], a shift that
// only tests set.
//
// Every script starts with the prelude: it reads the state (creating it if
// missing), makes the transitions that time has made due (an open breaker
// whose cooldown has ended turns half-open; a half-open breaker whose
// oldest trial has expired opens again), and then does its own work. A
// script that changes the state bumps the generation and publishes the new
// state on the channel ARGV[1] ("ep gen st remaining-µs"), so that every
// instance learns it at once. Scripts that apply an instance's outcomes
// are fenced: they take the generation (and epoch) the instance saw and
// do nothing if the state has moved on, so a stale instance never writes
// over a newer state; counts are added inside the script, so no two
// instances' updates are lost.
//
// Every script replies {ep, gen, st, remaining µs, verdict}: remaining is
// the rest of the cooldown while open, the time to the first trial's
// expiry while half-open.
const prelude = `
local H, Z, W, ch = KEYS[1], KEYS[2], KEYS[3], ARGV[1]
local cooldown, trialTimeout = tonumber(ARGV[2]), tonumber(ARGV[3])
local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2] + tonumber(ARGV[4])
local s = redis.call('HMGET', H, 'ep', 'gen', 'st', 'until')
local ep, gen, st, untl = tonumber(s[1]), tonumber(s[2]), tonumber(s[3]), tonumber(s[4])
if not ep then
	ep, gen, st, untl = now, 1, 0, 0
	redis.call('DEL', Z, W)
	redis.call('HSET', H, 'ep', string.format('%d', ep), 'gen', 1, 'st', 0, 'until', 0, 'streak', 0, 'ok', 0)
end
local function remaining()
	if st == 1 then return untl - now end
	if st == 2 then
		local first = redis.call('ZRANGE', Z, 0, 0, 'WITHSCORES')
		if first[2] then return tonumber(first[2]) - now end
	end
	return 0
end
local function set(to, u)
	gen, st, untl = gen + 1, to, u
	redis.call('DEL', Z, W)
	redis.call('HSET', H, 'gen', gen, 'st', st, 'until', string.format('%d', u), 'streak', 0, 'ok', 0)
	redis.call('PUBLISH', ch, string.format('%d %d %d %d', ep, gen, st, remaining()))
end
local function reply(verdict)
	return {ep, gen, st, remaining(), verdict}
end
for _ = 1, 8 do
	if st == 1 and now >= untl then
		set(2, 0)
	elseif st == 2 then
		local first = redis.call('ZRANGE', Z, 0, 0, 'WITHSCORES')
		if first[2] and tonumber(first[2]) <= now then
			set(1, tonumber(first[2]) + cooldown)
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
// ARGV[5], ARGV[6]: the generation and epoch the batch counts for
// (generation 0: an instance that has not learnt the state yet, whose
// calls count for the current generation if it is closed);
// ARGV[7..12]: successes, failures, slow calls, failures before the first
// success, the longest run of failures, failures after the last success
// (all in call order within the batch); ARGV[13..18]: threshold (0 off),
// failure ratio and slow-call ratio (0 off), min calls, bucket width µs,
// buckets. Verdict 1 if the batch was applied, 0 if the state had moved
// on. The streak at its peak within the batch is the streak before it
// plus the failures before its first success, or its longest run of
// failures, whichever is more: the consecutive rule sees every failure in
// the order the batches reach Redis.
var flushScript = redis.NewScript(prelude + `
local g = tonumber(ARGV[5])
if st ~= 0 or g ~= 0 and (gen ~= g or ep ~= tonumber(ARGV[6])) then return reply(0) end
local succ, fail, slw = tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9])
local lead, run, trail = tonumber(ARGV[10]), tonumber(ARGV[11]), tonumber(ARGV[12])
local threshold, fr, sr, minCalls = tonumber(ARGV[13]), tonumber(ARGV[14]), tonumber(ARGV[15]), tonumber(ARGV[16])
local width, buckets = tonumber(ARGV[17]), tonumber(ARGV[18])
local streak = tonumber(redis.call('HGET', H, 'streak')) or 0
local peak = math.max(streak + lead, run)
if succ > 0 then streak = trail else streak = streak + fail end
redis.call('HSET', H, 'streak', streak)
local idx = math.floor(now / width)
local j = idx % buckets
if tonumber(redis.call('HGET', W, 't' .. j)) ~= idx then
	redis.call('HSET', W, 't' .. j, idx, 's' .. j, 0, 'f' .. j, 0, 'w' .. j, 0)
end
redis.call('HINCRBY', W, 's' .. j, succ)
redis.call('HINCRBY', W, 'f' .. j, fail)
redis.call('HINCRBY', W, 'w' .. j, slw)
if fail == 0 and slw == 0 then return reply(1) end
local trip = threshold > 0 and peak >= threshold
if not trip and (fr > 0 or sr > 0) then
	local all = redis.call('HGETALL', W)
	local f = {}
	for i = 1, #all, 2 do f[all[i]] = tonumber(all[i + 1]) end
	local calls, fails, slows = 0, 0, 0
	for k = 0, buckets - 1 do
		local b = f['t' .. k]
		if b and b > idx - buckets then
			calls = calls + f['s' .. k] + f['f' .. k]
			fails = fails + f['f' .. k]
			slows = slows + f['w' .. k]
		end
	end
	if calls >= minCalls and calls > 0 then
		trip = fr > 0 and fails / calls >= fr or sr > 0 and slows / calls >= sr
	end
end
if trip then set(1, now + cooldown) end
return reply(1)
`)

// acquireScript asks for a half-open trial. ARGV[5]: the trial's member
// name; ARGV[6]: MaxTrials. Verdict 1: closed, admit as a closed call;
// 2: a trial, admitted; 0: refused (open, or MaxTrials trials out).
var acquireScript = redis.NewScript(prelude + `
if st == 0 then return reply(1) end
if st == 1 then return reply(0) end
if redis.call('ZCARD', Z) < tonumber(ARGV[6]) then
	redis.call('ZADD', Z, string.format('%d', now + trialTimeout), ARGV[5])
	return reply(2)
end
return reply(0)
`)

// reportScript reports a trial's outcome. ARGV[5], ARGV[6]: the
// generation and epoch of the trial; ARGV[7]: its member name; ARGV[8]:
// 0 success, 1 failure or slow, 2 ignored; ARGV[9]: SuccessThreshold.
// Verdict 1 if the report counted; 0 if the trial had expired or the
// state had moved on.
var reportScript = redis.NewScript(prelude + `
if st ~= 2 or gen ~= tonumber(ARGV[5]) or ep ~= tonumber(ARGV[6]) then return reply(0) end
if redis.call('ZREM', Z, ARGV[7]) == 0 then return reply(0) end
local o = tonumber(ARGV[8])
if o == 1 then
	set(1, now + cooldown)
elseif o == 0 and redis.call('HINCRBY', H, 'ok', 1) >= tonumber(ARGV[9]) then
	set(0, 0)
end
return reply(1)
`)
