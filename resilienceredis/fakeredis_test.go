package resilienceredis

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/redis/go-redis/v9"
)

// scriptedRedis is a redis.UniversalClient without a server, for tests in
// a synctest bubble (whose clock a real server does not follow): it
// answers EVALSHA of the limiter's scripts with gcra (the GCRA script's
// reply; nil: the bucket has tokens to spare) and of the settings script
// with the settings given (none: only the caller's), and CONFIG GET with
// a server that evicts nothing. Any other command panics on the embedded
// nil client: the test uses something the fake does not know.
type scriptedRedis struct {
	redis.UniversalClient
	gcra func(ctx context.Context) (any, error)
	// settings counts the runs of the settings script: the checks of the
	// server.
	settings atomic.Int64
}

func (f *scriptedRedis) EvalSha(ctx context.Context, sha string, keys []string, args ...any) *redis.Cmd {
	switch sha {
	case gcraScript.Hash():
		if f.gcra == nil {
			return redis.NewCmdResult([]any{int64(1), int64(-1000), int64(0)}, nil)
		}
		return redis.NewCmdResult(f.gcra(ctx))
	case settingsScript.Hash():
		f.settings.Add(1)
		return redis.NewCmdResult([]any{args[0]}, nil)
	}
	panic("scriptedRedis: EVALSHA of a script the fake does not know")
}

func (f *scriptedRedis) ConfigGet(ctx context.Context, _ string) *redis.MapStringStringCmd {
	return redis.NewMapStringStringResult(map[string]string{"maxmemory": "0", "maxmemory-policy": "noeviction"}, nil)
}

// reloadingRedis is a scriptedRedis that can reload its view of a
// cluster, as a *redis.ClusterClient can: it counts the reloads.
type reloadingRedis struct {
	*scriptedRedis
	reloads atomic.Int64
}

func (r *reloadingRedis) ReloadState(context.Context) { r.reloads.Add(1) }

// inBubble runs f in a synctest bubble. A round trip on a goroutine of
// its own (a client without ContextTimeoutEnabled, as the fakes are)
// takes its reply channel from resultPool and puts it back: a channel
// made in the bubble must not reach a test outside it (using it there
// panics), so the pool is emptied after the bubble (two collections clear
// a sync.Pool).
func inBubble(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	synctest.Test(t, f)
	runtime.GC()
	runtime.GC()
}
