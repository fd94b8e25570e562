package resiliencehttp_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/f0b5b96b/resilience/resiliencehttp"
)

// A failure whose body breaks while the attempt reads it is the attempt's
// error, and the broken body is closed at once: no one will read it, and
// its connection must not be left open.
func TestBrokenFailureBodyIsClosed(t *testing.T) {
	body := &trackedBody{ReadCloser: io.NopCloser(io.MultiReader(strings.NewReader("partial"), brokenReader{}))}
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{}, ContentLength: 100, Request: r, Body: body}, nil
	})
	req, _ := http.NewRequestWithContext(bounded(t), http.MethodGet, "http://dependency.test/", nil)
	resp, err := (&resiliencehttp.Transport{Base: base}).RoundTrip(req)
	if resp != nil {
		resp.Body.Close()
		t.Fatalf("RoundTrip returned a %d response, want an error", resp.StatusCode)
	}
	if err == nil {
		t.Fatal("RoundTrip returned neither a response nor an error")
	}
	if !body.closed.Load() {
		t.Error("the broken body was left open")
	}
}

type brokenReader struct{}

func (brokenReader) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }
