// Package serve holds the state machine that the server sides of this
// module's transports (resiliencehttp's Middleware, resiliencegrpc's server
// interceptors) share: a request's handler runs inside a policy of guards,
// at most once, and the server does not answer while it runs.
//
// A [Once] goes from idle to running (Enter) to served (Exit), or from idle
// to closed (Finish before any Enter). The policy's op calls Enter before it
// runs the handler and Exit once the handler returns; the server runs the
// policy through [Once.Do], which calls Finish however the policy returns:
// Finish waits for a handler that the policy left running (a timeout that
// abandons its op), makes sure an op called later does not run the handler,
// and reports whether the handler was called, so that a policy that
// returned nil without calling it (a fallback) is detected.
package serve

import (
	"context"
	"sync"

	"github.com/f0b5b96b/resilience"
)

// Once runs one request's handler at most once and lets the server wait
// for it. The zero Once is idle, ready for use; a Once must not be copied
// after first use. Its methods are safe for simultaneous use.
type Once struct {
	mu    sync.Mutex
	state state
	wake  chan struct{} // if not nil, closed when the handler returns: Finish waits
}

// state is where a request is; it changes under Once.mu, from idle to
// running to served, or from idle to closed.
type state uint8

const (
	idle    state = iota // the handler has not been called
	running              // the handler runs
	served               // the handler has returned
	closed               // the server is done without calling the handler; the op runs it no more
)

// Enter reports whether the op may run the handler: only the first time,
// and only before Finish. When it may, the op must call [Once.Exit] once the
// handler returns (or panics), in a defer. A second, simultaneous or late
// call returns false; the op then returns its package's refusal without
// running the handler.
func (o *Once) Enter() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.state != idle {
		return false
	}
	o.state = running
	return true
}

// Exit records that the handler returned (or panicked), and wakes Finish
// if it waits. It must be called once, after an Enter that returned true.
func (o *Once) Exit() {
	o.mu.Lock()
	o.state = served
	if o.wake != nil {
		close(o.wake)
	}
	o.mu.Unlock()
}

// Finish waits for the handler if it runs (the policy returned without
// waiting for it), makes sure the op will not run it later, and reports
// whether the handler was called. What the handler wrote is visible to
// Finish's caller once Finish returns true. Finish may be called more than
// once; it does not allocate unless it has to wait.
func (o *Once) Finish() bool {
	o.mu.Lock()
	if o.state == running {
		// Rare (the policy abandoned its op): the channel is made only then.
		wake := make(chan struct{})
		o.wake = wake
		o.mu.Unlock()
		<-wake
		return true
	}
	if o.state == idle {
		o.state = closed
	}
	ran := o.state == served
	o.mu.Unlock()
	return ran
}

// Do runs op through p under ctx and then [Once.Finish], also when p
// panics (the panic then goes on once the handler has returned). It returns
// whether the handler was called (Finish's result) and p's error: when ran
// is true the request has the handler's answer whatever err is; when it is
// false, err is p's refusal or, if nil, p returned without calling the
// handler.
func (o *Once) Do(ctx context.Context, p resilience.Policy[struct{}], op resilience.Op[struct{}]) (ran bool, err error) {
	returned := false
	defer func() {
		if !returned {
			o.Finish()
		}
	}()
	_, err = p.Do(ctx, op)
	returned = true
	return o.Finish(), err
}
