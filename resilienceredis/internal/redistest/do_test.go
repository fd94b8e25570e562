package redistest

import (
	"net"
	"sync"
	"testing"
)

// Do sends its command once: a node that drops the connection without
// an answer gets no second copy of it (a command that is not idempotent
// is not run twice).
func TestDoSendsOnce(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	got := 0
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return // the listener is closed
			}
			buf := make([]byte, 64)
			if n, _ := c.Read(buf); n > 0 {
				mu.Lock()
				got++
				mu.Unlock()
			}
			c.Close() // no answer
		}
	}()
	if _, err := (&Cluster{}).Do(ln.Addr().String(), "INCR", "k"); err == nil {
		t.Error("Do on a node that dropped the connection returned no error")
	}
	ln.Close()
	wg.Wait()
	if got != 1 {
		t.Errorf("the node got the command %d times, want once", got)
	}
}
