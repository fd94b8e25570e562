package resiliencegrpc

import (
	"context"
	"strconv"
	"strings"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/telemetry"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
)

// Option configures an interceptor. Options apply in order; the last one
// of a kind wins.
type Option interface{ apply(*config) }

type option func(*config)

func (f option) apply(c *config) { f(c) }

// config is what the options set.
type config struct {
	route
	methods  map[string]methodSpec // per full method name; nil if none
	inMethod bool                  // the options of a WithMethod are being applied
}

// methodSpec is a WithMethod's arguments.
type methodSpec struct {
	policy resilience.Policy[any]
	opts   []Option
}

// newConfig applies opts to the interceptor's policy p and resolves each
// method's route: the interceptor's settings, then the method's own.
func newConfig(p resilience.Policy[any], opts []Option) (def *route, methods map[string]*route) {
	c := config{route: route{policy: p}}
	for _, o := range opts {
		if o == nil {
			panic("resiliencegrpc: interceptor option must not be nil")
		}
		o.apply(&c)
	}
	def = &c.route
	if len(c.methods) > 0 {
		methods = make(map[string]*route, len(c.methods))
		for name, spec := range c.methods {
			mc := config{route: c.route, inMethod: true}
			mc.policy = spec.policy
			for _, o := range spec.opts {
				o.apply(&mc)
			}
			methods[name] = &mc.route
		}
	}
	return def, methods
}

// route is what an interceptor uses for the calls of one method.
type route struct {
	policy   resilience.Policy[any]
	classify func(*status.Status) bool // nil means IsFailure
	breaker  *breaker.Breaker          // nil: committed streams' failures are not recorded

	guardNames bool                         // server side: a refusal's message names its guard
	observer   telemetry.Observer           // server side: the receiver of the decisions' events; nil if none
	keyed      *resilience.Policy[struct{}] // server side: WithKeyedLimit's layer; nil if none
}

// waitsForReady reports whether an attempt under ctx is a half-open trial
// of r's breaker made under a deadline: one that waits for a ready
// connection (grpc.WaitForReady(true)) rather than failing at once while
// the connection is in its reconnect backoff.
func (r *route) waitsForReady(ctx context.Context) bool {
	if r.breaker == nil || r.breaker.State() != breaker.HalfOpen {
		return false
	}
	_, ok := ctx.Deadline()
	return ok
}

// waitForReady is the call option of a trial that waits for a ready
// connection.
var waitForReady = grpc.WaitForReady(true)

func (r *route) isFailure(s *status.Status) bool {
	if r.classify != nil {
		return r.classify(s)
	}
	return IsFailure(s)
}

// WithClassify sets how a call's status is classified: f reports whether it
// is a failure, which the policies see as an error, or the server's answer,
// which they see as a success and the caller gets as it came. nil means
// [IsFailure], the default. f is called once per attempt that ends with a
// status other than OK and whose context has not ended, possibly from
// several goroutines at once (a hedge's attempts, concurrent calls): it
// must be safe for simultaneous use.
//
// On the server side it classifies the status of the handler's error: a
// failure is an error for the guards (a breaker counts it), an answer is
// not.
func WithClassify(f func(*status.Status) bool) Option {
	return option(func(c *config) { c.classify = f })
}

// WithGuardNames makes the server side's refusals (the interceptors',
// [InHandle]'s, [RefusalStatus]) tell the remote client which guard refused
// and why: the status message is the refusal's reason and guard name, such
// as "ratelimit: limited (api): retry after 198ms", where by default it is
// generic ("resource exhausted: retry after 198ms"). Guard names are the
// server's own: turn this on only for clients that may see them. The client
// interceptors ignore it.
func WithGuardNames() Option {
	return option(func(c *config) { c.guardNames = true })
}

// WithObserver makes the server side ([UnaryServerInterceptor],
// [StreamServerInterceptor], [InHandle]) report its decision on each call
// to o, as one event: [EventAnswered], [EventFailure] or [EventRefused]
// (see "Events" at UnaryServerInterceptor). o is called on the call's
// goroutine (gRPC's reading goroutine for InHandle), from many at once, so
// it must be safe for that, and quick. nil, the default, reports nothing.
// The client interceptors ignore it.
func WithObserver(o telemetry.Observer) Option {
	return option(func(c *config) { c.observer = o })
}

// WithBreaker names the breaker inside the policy, for the client
// interceptors. nil, the default, names none. The server side does not use
// it.
//
// A stream that fails after it was committed (see
// [StreamClientInterceptor]) is recorded on b as a failure with
// (*breaker.Breaker).Record, out of band, since the policy has returned by
// then.
//
// An attempt made while b is half-open (a trial) under a deadline is made
// with grpc.WaitForReady(true): a trial that finds the connection in gRPC's
// reconnect backoff (TransientFailure, after the server was down) waits for
// a ready connection, up to its deadline, instead of failing at once and
// opening b for another cooldown although the server is back. Its deadline
// bounds the wait: the caller's, or a timeout's in the policy. A trial
// without a deadline is made as any call, failing at once on a connection
// that is not ready, so that it never waits without bound while it holds
// b's trial. The caller's own grpc.WaitForReady option is overridden on
// trials only.
func WithBreaker(b *breaker.Breaker) Option {
	return option(func(c *config) { c.breaker = b })
}

// WithMethod gives the calls of one method their own policy, used instead
// of the interceptor's: fullMethod is the method's full name,
// "/package.Service/Method". opts configure that method (WithClassify,
// WithBreaker); options it does not set are the interceptor's, whichever
// order the options come in. A later WithMethod for the same method
// replaces an earlier one.
//
// WithMethod panics if fullMethod is not of the form "/service/method", or
// if one of opts is nil or a WithMethod.
func WithMethod(fullMethod string, p resilience.Policy[any], opts ...Option) Option {
	svc, m, ok := strings.Cut(strings.TrimPrefix(fullMethod, "/"), "/")
	if !strings.HasPrefix(fullMethod, "/") || !ok || svc == "" || m == "" || strings.Contains(m, "/") {
		panic("resiliencegrpc: WithMethod fullMethod must be \"/service/method\", got " + strconv.Quote(fullMethod))
	}
	for _, o := range opts {
		if o == nil {
			panic("resiliencegrpc: WithMethod option must not be nil")
		}
	}
	return option(func(c *config) {
		if c.inMethod {
			panic("resiliencegrpc: WithMethod must not be an option of WithMethod")
		}
		if c.methods == nil {
			c.methods = make(map[string]methodSpec)
		}
		c.methods[fullMethod] = methodSpec{policy: p, opts: opts}
	})
}
