package redistest

import (
	"net"
	"strings"
	"testing"
	"time"
)

// Ping succeeds on a server; it fails on a closed port, on a server that
// answers something else than +PONG, and on one that does not answer
// within its timeout.
func TestPing(t *testing.T) {
	if err := Ping(Addr(t), time.Second); err != nil {
		t.Errorf("Ping of the package's server: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	if err := Ping(closed, time.Second); err == nil {
		t.Error("Ping of a closed port succeeded")
	}

	for _, c := range []struct {
		answer, want string
	}{
		{"-NOAUTH Authentication required.\r\n", `redistest: PING answered "-NOAUTH Authentication required.\r\n"`},
		{"+PONG", "EOF"},    // no line end: the server closed the connection
		{"", "i/o timeout"}, // never answers
	} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			c2, err := ln.Accept()
			if err != nil {
				return
			}
			defer c2.Close()
			buf := make([]byte, 6)
			if _, err := c2.Read(buf); err != nil || string(buf) != "PING\r\n" {
				t.Errorf("Ping sent %q (%v), want PING\\r\\n", buf, err)
			}
			if c.answer == "" {
				c2.SetReadDeadline(time.Now().Add(5 * time.Second)) // a bound: Ping gives up in 200ms
				c2.Read(buf)
				return
			}
			c2.Write([]byte(c.answer))
		}()
		err = Ping(ln.Addr().String(), 200*time.Millisecond)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Ping of a server answering %q: %v, want an error with %q", c.answer, err, c.want)
		}
		ln.Close()
		<-done
	}
}
