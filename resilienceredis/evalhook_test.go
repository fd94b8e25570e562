package resilienceredis

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// evalHook stands between a client and Redis for the scripts' round trips
// (EVALSHA, EVAL): it runs f with the command and the rest of the chain
// (next, the round trip itself), and gives f's error; other commands pass.
type evalHook func(ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error

func (h evalHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h evalHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if n := cmd.Name(); n != "evalsha" && n != "eval" {
			return next(ctx, cmd)
		}
		err := h(ctx, cmd, next)
		if err != nil {
			cmd.SetErr(err)
		}
		return err
	}
}
func (h evalHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
