package resiliencehttp_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/f0b5b96b/resilience/resiliencehttp"
)

// The request's body belongs to the Base once an attempt has handed it
// on: the Transport does not close it when RoundTrip returns, so a Base
// that streams it while the caller reads the response (full duplex, as an
// HTTP/2 Base may) keeps sending it.
func TestRequestBodyHandedOnIsTheBasesToClose(t *testing.T) {
	pr, pw := io.Pipe()
	echo := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, ContentLength: -1, Request: r, Body: r.Body}, nil
	})
	req, _ := http.NewRequestWithContext(bounded(t), http.MethodPost, "http://dependency.test/echo", pr)
	resp, err := (&resiliencehttp.Transport{Base: echo}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	written := make(chan error, 1)
	go func() {
		_, err := io.WriteString(pw, "sent after RoundTrip returned")
		pw.Close()
		written <- err
	}()
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(got) != "sent after RoundTrip returned" {
		t.Errorf("the response streamed %q, %v; want the request's body, nil", got, err)
	}
	if err := recv(t, written, "the request body's writer never returned"); err != nil {
		t.Errorf("writing the request's body: %v", err)
	}
}
