package resiliencegrpc_test

import (
	"strings"
	"testing"

	"github.com/f0b5b96b/resilience/resiliencegrpc"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
)

// A stream that sent exactly ReplayLimit bytes before the commit is still
// replayed.
func TestStreamReplayLimitIsInclusive(t *testing.T) {
	body := strings.Repeat("x", resiliencegrpc.ReplayLimit-16)
	for proto.Size(outputReq(body)) < resiliencegrpc.ReplayLimit {
		body += "x"
	}
	if n := proto.Size(outputReq(body)); n != resiliencegrpc.ReplayLimit {
		t.Fatalf("no request of exactly ReplayLimit bytes: %d", n)
	}
	srv := &flaky{script: []step{{code: codes.Unavailable, recv: 1}}}
	c := streamClient(t, srv, fast)
	s, err := c.FullDuplexCall(bounded(t))
	if err != nil {
		t.Fatalf("FullDuplexCall: %v", err)
	}
	if err := s.Send(outputReq(body)); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if err := s.CloseSend(); err != nil {
		t.Fatalf("CloseSend: %v", err)
	}
	got, err := drain(s.Recv)
	if err != nil {
		t.Fatalf("Recv: %v, want the stream replayed", err)
	}
	if diff := cmp.Diff([]int{1, 1}, []int{len(got), len(srv.streams()) - 1}); diff != "" {
		t.Errorf("echoes, replays mismatch (-want +got):\n%s", diff)
	}
}
