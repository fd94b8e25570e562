package resiliencehttp_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/resiliencehttp"
)

// conn is the body of a 101 Switching Protocols response: the connection,
// read and written both ways.
type conn struct {
	io.Reader
	written bytes.Buffer
	closed  bool
}

func (c *conn) Write(p []byte) (int, error) { return c.written.Write(p) }
func (c *conn) Close() error                { c.closed = true; return nil }

// A 101 Switching Protocols response's body is the upgraded connection: the
// caller gets it writable, and it is an exchange in flight (its Bulkhead
// slot held) until the caller closes it, whatever its Content-Length says.
func TestSwitchingProtocolsBodyStaysWritableAndHoldsItsSlot(t *testing.T) {
	for _, length := range []int64{-1, 0} {
		c := &conn{Reader: strings.NewReader("hello from the server")}
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			h := http.Header{"Connection": {"Upgrade"}, "Upgrade": {"websocket"}}
			return &http.Response{StatusCode: http.StatusSwitchingProtocols, Header: h, ContentLength: length, Request: r, Body: c}, nil
		})
		bh := bulkhead.New(1)
		req, _ := http.NewRequestWithContext(bounded(t), http.MethodGet, "http://dependency.test/chat", nil)
		resp, err := (&resiliencehttp.Transport{Base: base, Bulkhead: bh}).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		if n := bh.InFlight(); n != 1 {
			t.Errorf("Content-Length %d: InFlight = %d with the connection open, want 1", length, n)
		}
		w, ok := resp.Body.(io.Writer)
		if !ok {
			t.Fatalf("Content-Length %d: the body (%T) is not writable", length, resp.Body)
		}
		if _, err := io.WriteString(w, "hello from the client"); err != nil {
			t.Fatalf("Content-Length %d: writing to the connection: %v", length, err)
		}
		if got, want := c.written.String(), "hello from the client"; got != want {
			t.Errorf("Content-Length %d: the connection got %q, want %q", length, got, want)
		}
		buf := make([]byte, 5)
		if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != "hello" {
			t.Errorf("Content-Length %d: read %q, %v from the connection, want %q", length, buf, err, "hello")
		}
		if n := bh.InFlight(); n != 1 {
			t.Errorf("Content-Length %d: InFlight = %d with the connection open after a read, want 1", length, n)
		}
		resp.Body.Close()
		if !c.closed {
			t.Errorf("Content-Length %d: closing the body did not close the connection", length)
		}
		if n := bh.InFlight(); n != 0 {
			t.Errorf("Content-Length %d: InFlight = %d once the connection is closed, want 0", length, n)
		}
	}
}
