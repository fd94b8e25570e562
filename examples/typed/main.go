// Command typed shows business code keeping its own function shapes while
// the library guards its calls, and one breaker guarding one dependency for
// calls of different result types.
//
// It starts a small billing service on 127.0.0.1 with two endpoints, an
// invoice (a struct) and a count of open invoices (an int). The client's
// methods have the shapes the business wants, func(ctx, id) (*Invoice,
// error) and func(ctx, customer) (int, error); resilience.Guard wraps each
// with a pipeline of its own type, and both pipelines share the one
// breaker of the billing dependency. When billing fails, failures of either
// kind of call trip the breaker, and then both kinds are refused.
//
//	go run ./examples/typed
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/timeout"
)

// Invoice is what the billing service returns.
type Invoice struct {
	ID       string `json:"id"`
	Customer string `json:"customer"`
	Cents    int    `json:"cents"`
}

// Billing is the business code's view of the billing dependency: plain
// functions of its own shapes.
type Billing struct {
	Invoice   func(ctx context.Context, id string) (*Invoice, error)
	OpenCount func(ctx context.Context, customer string) (int, error)
}

// NewBilling returns the guarded client of the billing service at base. The
// breaker is shared: one dependency, one breaker, whatever the call returns.
func NewBilling(base string, b *breaker.Breaker) Billing {
	c := &client{base: base, http: &http.Client{}}
	return Billing{
		Invoice: resilience.Guard(
			resilience.Then(breaker.Policy[*Invoice](b), timeout.New[*Invoice](time.Second)),
			c.invoice),
		OpenCount: resilience.Guard(
			resilience.Then(breaker.Policy[int](b), timeout.New[int](time.Second)),
			c.openCount),
	}
}

type client struct {
	base string
	http *http.Client
}

func (c *client) invoice(ctx context.Context, id string) (*Invoice, error) {
	var inv Invoice
	if err := c.get(ctx, "/invoices/"+id, &inv); err != nil {
		return nil, err
	}
	return &inv, nil
}

func (c *client) openCount(ctx context.Context, customer string) (int, error) {
	var n int
	err := c.get(ctx, "/customers/"+customer+"/open", &n)
	return n, err
}

func (c *client) get(ctx context.Context, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("billing: GET %s: %s", path, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// serve starts the billing service; down makes it answer 503.
func serve(down *atomic.Bool) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /invoices/{id}", func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, "billing is down", http.StatusServiceUnavailable)
			return
		}
		_ = json.NewEncoder(w).Encode(Invoice{ID: r.PathValue("id"), Customer: "acme", Cents: 12_00})
	})
	mux.HandleFunc("GET /customers/{id}/open", func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, "billing is down", http.StatusServiceUnavailable)
			return
		}
		_ = json.NewEncoder(w).Encode(3)
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), func() { srv.Close() }, nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "typed:", err)
		os.Exit(1)
	}
}

func run() error {
	var down atomic.Bool
	base, stop, err := serve(&down)
	if err != nil {
		return err
	}
	defer stop()

	b := breaker.New(breaker.WithName("billing"), breaker.WithThreshold(4), breaker.WithCooldown(time.Minute),
		breaker.WithOnStateChange(func(tr breaker.Transition) {
			fmt.Printf("breaker(%s): %v -> %v after %d consecutive failures, from both call types\n",
				tr.Name, tr.From, tr.To, tr.Counts.ConsecutiveFailures)
		}))
	billing := NewBilling(base, b)
	ctx := context.Background()

	inv, err := billing.Invoice(ctx, "INV-7")
	fmt.Printf("Invoice(INV-7)    = %+v, %v\n", *inv, err)
	n, err := billing.OpenCount(ctx, "acme")
	fmt.Printf("OpenCount(acme)   = %d, %v\n", n, err)

	fmt.Println("\nbilling goes down: two failures of each kind of call")
	down.Store(true)
	for range 2 {
		_, err = billing.Invoice(ctx, "INV-8")
		fmt.Printf("Invoice(INV-8)    -> %v\n", err)
		_, err = billing.OpenCount(ctx, "acme")
		fmt.Printf("OpenCount(acme)   -> %v\n", err)
	}

	fmt.Println("\nboth kinds of call are now refused without reaching billing:")
	_, errInv := billing.Invoice(ctx, "INV-9")
	_, errCount := billing.OpenCount(ctx, "acme")
	fmt.Printf("Invoice(INV-9)    -> %v\n", errInv)
	fmt.Printf("OpenCount(acme)   -> %v\n", errCount)

	if b.State() != breaker.Open || !errors.Is(errInv, breaker.ErrOpen) || !errors.Is(errCount, breaker.ErrOpen) {
		return errors.New("the shared breaker did not open for both call types")
	}
	return nil
}
